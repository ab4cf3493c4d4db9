package wiretrim

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

var podKind = Kind{Version: "v1", Resource: "pods", Kind: "Pod", Drop: []Path{ManagedFields}}

func pod(name string, managed []metav1.ManagedFieldsEntry) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "12", ManagedFields: managed,
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func managed(fieldsLen int) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:x":"` + strings.Repeat("y", fieldsLen) + `"}`)}}}
}

func clientset(t *testing.T, rt http.RoundTripper) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfigAndClient(&rest.Config{Host: "http://wiretrim.invalid",
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf}}, &http.Client{Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// The lengths of the trimmed messages, of the envelopes and of the frames are recomputed,
// also where they take fewer bytes than before (a message shrinking under 128 bytes).
func TestWrapper_DropsManagedFieldsOfListsAndWatchesOfEverySize(t *testing.T) {
	for nameLen := 1; nameLen < 200; nameLen += 3 {
		for _, fieldsLen := range []int{0, 20, 120, 300} {
			var pods []runtime.Object
			var events []wiretrimtest.Event
			for i := range 3 {
				p := pod(strings.Repeat("p", nameLen+i), managed(fieldsLen))
				pods = append(pods, p)
				events = append(events, wiretrimtest.Event{Type: watch.Added, Object: p})
			}
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "13"}}
			for _, p := range pods {
				list.Items = append(list.Items, *p.(*corev1.Pod))
			}
			listBytes, err := wiretrimtest.Object(list)
			if err != nil {
				t.Fatal(err)
			}
			watchBytes, err := wiretrimtest.Watch(events...)
			if err != nil {
				t.Fatal(err)
			}
			cs := clientset(t, Wrapper(podKind)(wiretrimtest.Responder{List: listBytes, Watch: watchBytes}))
			got, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("name %d, fields %d: %v", nameLen, fieldsLen, err)
			}
			want := list.DeepCopy()
			for i := range want.Items {
				want.Items[i].ManagedFields = nil
			}
			if !apiequality.Semantic.DeepEqual(got.Items, want.Items) || got.ResourceVersion != "13" {
				t.Fatalf("name %d, fields %d: listed (-want +got):\n%s", nameLen, fieldsLen, diff.Diff(want, got))
			}
			w, err := cs.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for e := range w.ResultChan() {
				if e.Type != watch.Added || !apiequality.Semantic.DeepEqual(e.Object, &want.Items[i]) {
					t.Fatalf("name %d, fields %d: event %d is %s (-want +got):\n%s", nameLen, fieldsLen, i, e.Type, diff.Diff(&want.Items[i], e.Object))
				}
				i++
			}
			if i != len(events) {
				t.Fatalf("watched %d events, want %d", i, len(events))
			}
		}
	}
}

// body returns what a GET of path answered with body and contentType reads as through
// the wrapper of podKind.
func body(t *testing.T, method, path, contentType, contentEncoding string, status int, in []byte) []byte {
	t.Helper()
	rt := Wrapper(podKind)(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Type": {contentType}}
		if contentEncoding != "" {
			h.Set("Content-Encoding", contentEncoding)
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(in)), Request: req}, nil
	}))
	req, err := http.NewRequest(method, "http://wiretrim.invalid"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func encodedWatch(t *testing.T, events ...wiretrimtest.Event) []byte {
	t.Helper()
	b, err := wiretrimtest.Watch(events...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWrapper_PassesThroughWhatItDoesNotTrim(t *testing.T) {
	withMF := encodedWatch(t, wiretrimtest.Event{Type: watch.Added, Object: pod("p", managed(100))})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: managed(100)}}
	status := &metav1.Status{Status: metav1.StatusFailure, Message: "too old", Reason: metav1.StatusReasonExpired, Code: 410,
		ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for name, c := range map[string]struct {
		method, path, contentType, encoding string
		status                              int
		in                                  []byte
	}{
		"JSON":                            {"GET", "/api/v1/pods", "application/json", "", 200, []byte(`{"kind":"PodList","items":[]}`)},
		"a custom resource":               {"GET", "/apis/example.com/v1/widgets", wiretrimtest.WatchContentType, "", 200, withMF},
		"a named pod":                     {"GET", "/api/v1/namespaces/ns/pods/p", wiretrimtest.WatchContentType, "", 200, withMF},
		"a subresource":                   {"GET", "/api/v1/namespaces/ns/pods/p/status", wiretrimtest.WatchContentType, "", 200, withMF},
		"a POST":                          {"POST", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, withMF},
		"an error":                        {"GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 500, withMF},
		"a body still gzipped":            {"GET", "/api/v1/pods", wiretrimtest.WatchContentType, "gzip", 200, withMF},
		"another stream":                  {"GET", "/api/v1/pods", runtime.ContentTypeProtobuf + ";stream=other", "", 200, withMF},
		"another kind in the pods' watch": {"GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, encodedWatch(t, wiretrimtest.Event{Type: watch.Added, Object: node})},
		"a Status in an ERROR event":      {"GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, encodedWatch(t, wiretrimtest.Event{Type: watch.Error, Object: status})},
		"a Status as the list":            {"GET", "/api/v1/pods", wiretrimtest.ListContentType, "", 200, mustObject(t, status)},
		"a list of nodes":                 {"GET", "/api/v1/pods", wiretrimtest.ListContentType, "", 200, mustObject(t, &corev1.NodeList{Items: []corev1.Node{*node}})},
		"an empty body":                   {"GET", "/api/v1/pods", wiretrimtest.ListContentType, "", 200, nil},
		"an empty stream":                 {"GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if out := body(t, c.method, c.path, c.contentType, c.encoding, c.status, c.in); !bytes.Equal(out, c.in) {
				t.Errorf("changed %d bytes into %d", len(c.in), len(out))
			}
		})
	}
	// And the wrapper does trim a protobuf watch of pods (the cases above could pass for a
	// wrapper that never trims).
	if out := body(t, "GET", "/api/v1/namespaces/ns/pods", wiretrimtest.WatchContentType, "", 200, withMF); len(out) >= len(withMF) {
		t.Errorf("a watch of pods with managedFields kept its %d bytes (%d)", len(withMF), len(out))
	}
}

func mustObject(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	b, err := wiretrimtest.Object(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Malformed frames pass through unchanged between trimmed ones, and a stream cut inside a
// frame ends where it was cut.
func TestWrapper_PassesMalformedFramesThroughUnchanged(t *testing.T) {
	good := encodedWatch(t, wiretrimtest.Event{Type: watch.Added, Object: pod("p", managed(100))})
	trimmedGood := body(t, "GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, good)
	if len(trimmedGood) >= len(good) {
		t.Fatalf("the good frame was not trimmed")
	}
	bad := frame([]byte{0xff, 0xff, 0xff})                           // a tag that does not parse
	badObject := frame(append([]byte{0x12, 0x05}, "k8s\x00\x0a"...)) // an object whose envelope is cut
	in := bytes.Join([][]byte{good, bad, good, badObject, good}, nil)
	want := bytes.Join([][]byte{trimmedGood, bad, trimmedGood, badObject, trimmedGood}, nil)
	if out := body(t, "GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, in); !bytes.Equal(out, want) {
		t.Errorf("got %x\nwant %x", out, want)
	}
	for cut := range len(good) {
		in := append(append([]byte{}, good...), good[:cut]...)
		want := append(append([]byte{}, trimmedGood...), good[:cut]...)
		if out := body(t, "GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, in); !bytes.Equal(out, want) {
			t.Fatalf("cut at %d: got %x\nwant %x", cut, out, want)
		}
	}
	huge := binary.BigEndian.AppendUint32(nil, maxFrame+1)
	huge = append(huge, good...)
	if out := body(t, "GET", "/api/v1/pods", wiretrimtest.WatchContentType, "", 200, huge); !bytes.Equal(out, huge) {
		t.Errorf("a frame over the bound and what follows it changed")
	}
}

func frame(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// Whatever the bytes, the wrapper neither panics nor fails the read, and a list reads as
// trimmed into a new buffer or, when that fails, unchanged.
func FuzzWrapper(f *testing.F) {
	watchBytes, err := wiretrimtest.Watch(wiretrimtest.Event{Type: watch.Added, Object: pod("p", managed(50))})
	if err != nil {
		f.Fatal(err)
	}
	listBytes, err := wiretrimtest.Object(&corev1.PodList{Items: []corev1.Pod{*pod("p", managed(50))}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(watchBytes, true)
	f.Add(listBytes, false)
	for i := 0; i < len(watchBytes); i += 7 {
		b := bytes.Clone(watchBytes)
		b[i] ^= 0x5a
		f.Add(b, true)
		l := bytes.Clone(listBytes)
		l[i%len(l)] ^= 0xa5
		f.Add(l, false)
	}
	f.Fuzz(func(t *testing.T, in []byte, stream bool) {
		ct := wiretrimtest.ListContentType
		if stream {
			ct = wiretrimtest.WatchContentType
		}
		out := body(t, "GET", "/api/v1/pods", ct, "", 200, in)
		if len(out) > len(in) {
			t.Errorf("%d bytes grew to %d", len(in), len(out))
		}
		if !stream {
			// A list is trimmed in place: as into a new buffer, or passed through unchanged.
			want := in
			if trimmed, ok := newRule(podKind).appendEncoded(nil, in); ok {
				want = trimmed
			}
			if !bytes.Equal(out, want) {
				t.Errorf("the list read %x, want %x", out, want)
			}
		}
	})
}

func TestCollection(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/pods":                             "/api/v1/pods",
		"/api/v1/namespaces/ns/pods":               "/api/v1/pods",
		"/apis/apps/v1/replicasets":                "/apis/apps/v1/replicasets",
		"/apis/apps/v1/namespaces/ns/replicasets/": "/apis/apps/v1/replicasets",
		"/api/v1/namespaces":                       "/api/v1/namespaces",
		"/api/v1/namespaces/ns":                    "",
		"/api/v1/namespaces/ns/pods/p":             "",
		"/api/v1/nodes/n/status":                   "",
		"/apis/apps/v1":                            "",
		"/api/v1":                                  "",
		"/healthz":                                 "",
		"/api/v1/namespaces//pods":                 "",
	} {
		if got := collection(path); got != want {
			t.Errorf("collection(%q) = %q, want %q", path, got, want)
		}
	}
}
