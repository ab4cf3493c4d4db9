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
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// TestListBody_HoldsTheListOnce: a list whose Content-Length is known is read into one
// buffer of that size and trimmed in place: the wrapper allocates about the list's size,
// not a buffer grown as it reads plus another for the trimmed list. The trimmed list is
// the one trimmed into a new buffer.
func TestListBody_HoldsTheListOnce(t *testing.T) {
	list := &corev1.PodList{}
	for i := range 2000 {
		list.Items = append(list.Items, *pod(fmt.Sprintf("pod-%05d", i), managed(400)))
	}
	raw := mustObject(t, list)
	want, ok := newRule(podKind).appendEncoded(nil, raw)
	if !ok {
		t.Fatal("the list does not trim")
	}
	rt := Wrapper(podKind)(respond(raw, wiretrimtest.ListContentType, true))
	req, _ := http.NewRequest(http.MethodGet, "http://wiretrim.invalid/api/v1/pods", nil)
	var out bytes.Buffer
	out.Grow(len(raw))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(&out, struct{ io.Reader }{resp.Body}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("read %d bytes, not the list trimmed (%d bytes)", out.Len(), len(want))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(raw))*5/4 {
		t.Errorf("reading a list of %d bytes allocated %d bytes, want about the list once", len(raw), alloc)
	}
}

// TestWatchBody_AnIdleWatchHoldsNoBuffer: once an event has been read, the watch gives its
// buffers back (to a pool) until the next frame arrives, however large the event was;
// events of every size still come out trimmed.
func TestWatchBody_AnIdleWatchHoldsNoBuffer(t *testing.T) {
	var events []wiretrimtest.Event
	for _, size := range []int{10, 5 << 10, 100 << 10, 1 << 20, 3 << 20} {
		p := pod("p", managed(100))
		p.Annotations = map[string]string{"a": strings.Repeat("x", size)}
		events = append(events, wiretrimtest.Event{Type: watch.Added, Object: p})
	}
	r := newRule(podKind)
	for _, e := range events {
		in := encodedWatch(t, e)
		want, ok := r.appendEvent(nil, in[4:])
		if !ok {
			t.Fatal("the event does not trim")
		}
		b := &watchBody{src: io.NopCloser(bytes.NewReader(in)), rule: r}
		got := make([]byte, 4+len(want))
		if _, err := io.ReadFull(b, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[4:], want) {
			t.Fatalf("an event of %d bytes: not trimmed as appendEvent trims it", len(in))
		}
		if b.in != nil || b.out != nil {
			t.Errorf("after an event of %d bytes, the watch holds its buffers", len(in))
		}
	}
}
