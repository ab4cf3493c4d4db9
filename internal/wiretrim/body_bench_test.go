package wiretrim

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// BenchmarkWatchBody is the trimmer's own cost: a watch stream of 10,000 pods read
// through it (op = one pod), against the stream read as it is.
func BenchmarkWatchBody(b *testing.B) {
	const n = 10000
	events := make([]wiretrimtest.Event, n)
	for i := range events {
		p := pod(fmt.Sprintf("pod-%05d", i), managed(400))
		p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		events[i] = wiretrimtest.Event{Type: watch.Added, Object: p}
	}
	stream, err := wiretrimtest.Watch(events...)
	if err != nil {
		b.Fatal(err)
	}
	r := newRule(podKind)
	buf := make([]byte, 32<<10)
	for _, trim := range []bool{false, true} {
		b.Run(fmt.Sprintf("trim=%t", trim), func(b *testing.B) {
			b.SetBytes(int64(len(stream) / n))
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					var body io.Reader = bytes.NewReader(stream)
					if trim {
						body = &watchBody{src: io.NopCloser(body), rule: r}
					}
					if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{body}, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
