package wiretrim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// respond answers every request with body as contentType, with its Content-Length when
// known (a chunked answer has none).
func respond(body []byte, contentType string, known bool) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		length := int64(-1)
		if known {
			length = int64(len(body))
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {contentType}},
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: length, Request: req}, nil
	})
}

// BenchmarkListBody is what a list of 10,000 pods with managedFields costs through the
// wrapper, read whole as client-go reads it (io.ReadAll): op = one list. B/op counts every
// copy of the list (client-go's own included); the Content-Length is known (the API server
// sent one) or not (chunked).
func BenchmarkListBody(b *testing.B) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "13"}}
	for i := range 10000 {
		list.Items = append(list.Items, *pod(fmt.Sprintf("pod-%05d", i), managed(400)))
	}
	raw, err := wiretrimtest.Object(list)
	if err != nil {
		b.Fatal(err)
	}
	for _, known := range []bool{true, false} {
		b.Run(fmt.Sprintf("length-known=%t", known), func(b *testing.B) {
			rt := Wrapper(podKind)(respond(raw, wiretrimtest.ListContentType, known))
			req, _ := http.NewRequest(http.MethodGet, "http://wiretrim.invalid/api/v1/pods", nil)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				out, err := io.ReadAll(resp.Body)
				if err != nil || len(out) >= len(raw) {
					b.Fatalf("read %d of %d bytes: %v", len(out), len(raw), err)
				}
				_ = resp.Body.Close()
			}
		})
	}
}

// BenchmarkWatchBody_Idle is the memory a watch holds between events: idleWatches watches
// of pods (a shard has one per node), each of which delivered one event (a pod whose
// managedFields or annotations are large) and waits for the next; retained-B/watch is the
// live heap they hold, measured after a GC, per watch.
func BenchmarkWatchBody_Idle(b *testing.B) {
	const idleWatches = 200
	for _, c := range []struct {
		name                 string
		managed, annotations int
	}{
		{"event=2KiB", 100, 1 << 10},
		{"event=100KiB-managedFields", 100 << 10, 0},
		{"event=400KiB-annotations", 10 << 10, 400 << 10},
	} {
		p := pod("p", managed(c.managed))
		p.Annotations = map[string]string{"big": strings.Repeat("a", c.annotations)}
		stream, err := wiretrimtest.Watch(wiretrimtest.Event{Type: watch.Added, Object: p})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			rt := Wrapper(podKind)(respond(stream, wiretrimtest.WatchContentType, false))
			req, _ := http.NewRequest(http.MethodGet, "http://wiretrim.invalid/api/v1/pods?watch=true", nil)
			buf := make([]byte, 32<<10)
			var retained float64
			for b.Loop() {
				bodies := make([]io.ReadCloser, idleWatches)
				before := liveHeap()
				for i := range bodies {
					resp, err := rt.RoundTrip(req)
					if err != nil {
						b.Fatal(err)
					}
					bodies[i] = resp.Body
					// The event, read as client-go's frame reader does; then the stream is
					// at its end, as an idle watch is between events.
					if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, buf); err != nil {
						b.Fatal(err)
					}
				}
				retained = float64(liveHeap()-before) / idleWatches
				for _, body := range bodies {
					_ = body.Close()
				}
				runtime.KeepAlive(bodies)
			}
			b.ReportMetric(retained, "retained-B/watch")
		})
	}
}

// liveHeap is the live heap after a GC.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
