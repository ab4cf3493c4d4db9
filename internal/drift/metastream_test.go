package drift

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// metadataAPI answers MetadataStream's lists from the objects of inf as the API server
// does: their metadata (labels and managedFields included), sorted by key, in pages of the
// request's limit (the continue token is an offset), in protobuf unless json; body, when
// set, answers instead.
type metadataAPI struct {
	t      testing.TB
	inf    *fakeInformers
	byPath map[string]Listing
	json   bool
	body   func(path string) (int, []byte)
	mu     sync.Mutex
	pages  int
	// encoded are the pages answered, by request URI.
	encoded map[string][]byte
}

func newMetadataStream(t testing.TB, inf *fakeInformers, pageSize int64, wrap ...func(http.RoundTripper) http.RoundTripper) (*MetadataStream, *metadataAPI) {
	t.Helper()
	s := scheme.New()
	mapper := meta.NewDefaultRESTMapper(nil)
	api := &metadataAPI{t: t, inf: inf, byPath: map[string]Listing{}}
	for _, l := range Listings {
		gvk, err := apiutil.GVKForObject(l.Object, s)
		if err != nil {
			t.Fatal(err)
		}
		mapper.Add(gvk, meta.RESTScopeNamespace)
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		path := "/apis/" + m.Resource.Group + "/" + m.Resource.Version + "/" + m.Resource.Resource
		if m.Resource.Group == "" {
			path = "/api/" + m.Resource.Version + "/" + m.Resource.Resource
		}
		api.byPath[path] = l
	}
	var rt http.RoundTripper = api
	for _, w := range wrap {
		rt = w(rt)
	}
	stream, err := NewMetadataStream(&rest.Config{Host: "http://api.invalid", QPS: -1}, &http.Client{Transport: rt}, s, mapper,
		APISource{Reader: informerReader{inf}, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	return stream, api
}

func (a *metadataAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pages++
	if accept := req.Header.Get("Accept"); !strings.Contains(accept, "as=PartialObjectMetadataList") {
		a.t.Errorf("%s asked for %q, not a list of metadata", req.URL, accept)
	}
	status, body, contentType := http.StatusOK, []byte(nil), runtime.ContentTypeProtobuf
	if a.body != nil {
		status, body = a.body(req.URL.Path)
		contentType = runtime.ContentTypeJSON
	} else {
		body = a.page(req)
		if a.json {
			contentType = runtime.ContentTypeJSON
		}
	}
	return &http.Response{
		StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header: http.Header{"Content-Type": []string{contentType}}, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}, nil
}

func (a *metadataAPI) page(req *http.Request) []byte {
	if b, ok := a.encoded[req.URL.RequestURI()]; ok {
		return b
	}
	b := a.encode(req)
	if a.encoded == nil {
		a.encoded = map[string][]byte{}
	}
	a.encoded[req.URL.RequestURI()] = b
	return b
}

func (a *metadataAPI) encode(req *http.Request) []byte {
	l, ok := a.byPath[req.URL.Path]
	if !ok {
		a.t.Fatalf("no listing at %s", req.URL.Path)
	}
	var items []metav1.PartialObjectMetadata
	if store := a.inf.stores[reflect.TypeOf(l.Object)]; store != nil {
		for _, item := range store.List() {
			o := item.(client.Object)
			items = append(items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Namespace: o.GetNamespace(), Name: o.GetName(), ResourceVersion: o.GetResourceVersion(), UID: o.GetUID(),
				Generation: 3, Labels: map[string]string{"app": "x"}, CreationTimestamp: metav1.Unix(1, 0),
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}},
			}})
		}
	}
	slices.SortFunc(items, func(x, y metav1.PartialObjectMetadata) int {
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	q := req.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, _ := strconv.Atoi(q.Get("continue"))
	list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}}
	list.ResourceVersion = "100"
	end := min(len(items), offset+limit)
	list.Items = items[offset:end]
	if end < len(items) {
		list.Continue = strconv.Itoa(end)
	}
	if a.json {
		b, err := json.Marshal(list)
		if err != nil {
			a.t.Fatal(err)
		}
		return b
	}
	s := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(s); err != nil {
		a.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(list, &buf); err != nil {
		a.t.Fatal(err)
	}
	return buf.Bytes()
}

// informerReader reads objects from informers' stores: what the comparison reads again.
type informerReader struct{ inf *fakeInformers }

func (r informerReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if store := r.inf.stores[reflect.TypeOf(obj)]; store != nil {
		storeKey := key.Name
		if key.Namespace != "" {
			storeKey = key.Namespace + "/" + key.Name
		}
		if item, ok, _ := store.GetByKey(storeKey); ok {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(item).Elem())
			return nil
		}
	}
	return apierrors.NewNotFound(corev1.Resource("x"), key.Name)
}

func (r informerReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("informerReader lists nothing")
}

// TestMetadataStream_FindsWhatTheInformersFind: the comparison with the API's metadata lists
// read as they arrive, in protobuf and in JSON, in pages of 7 (namespaces that change
// inside a page and across pages), finds exactly the differences the comparison with
// informers holding the same objects finds.
func TestMetadataStream_FindsWhatTheInformersFind(t *testing.T) {
	defer func(w time.Duration) { recheckWait = w }(recheckWait)
	recheckWait = 0
	h := newCache(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	inf := newFakeInformers()
	for i := range 3 {
		node := withRV(ts.MakeNode(fmt.Sprintf("n%d", i), "8", "32Gi"), "1")
		must(h.Add(node))
		inf.add(t, node)
	}
	inf.add(t, withRV(ts.MakeNode("new-node", "8", "32Gi"), "1"))
	for i := range 50 {
		pod := ts.MakePod([]string{"a", "a-b", "ab"}[i%3], fmt.Sprintf("p%02d", i), ts.OnNode("n0"), ts.WithResourceVersion("1"))
		must(h.Add(pod))
		switch i {
		case 7:
			inf.add(t, withRV(pod.DeepCopy(), "2"))
		case 8:
		default:
			inf.add(t, pod)
		}
	}
	inf.add(t, ts.MakePod("a", "new", ts.OnNode("n1"), ts.WithResourceVersion("3")))
	must(h.Add(owner(v1alpha1.OwnerDeployment, "a", "web", "5")))
	must(h.Add(owner(v1alpha1.OwnerReplicaSet, "a", "web", "6")))
	must(h.Add(owner(v1alpha1.OwnerStatefulSet, "a", "db", "1")))
	inf.add(t, deployment("a", "web", "5"), replicaSet("a", "web", "7"), &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", ResourceVersion: "8"}})

	want, err := Compare(context.Background(), h, InformerSource{Informers: inf}, nil)
	must(err)
	if len(want) != 7 {
		t.Fatalf("the informers find %d differences, the test wants 7: %+v", len(want), want)
	}
	for _, asJSON := range []bool{false, true} {
		stream, api := newMetadataStream(t, inf, 7)
		api.json = asJSON
		got, err := Compare(context.Background(), h, stream, nil)
		must(err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("JSON %v:\n got %+v\nwant %+v", asJSON, got, want)
		}
		// 51 pods in 8 pages, 4 nodes in 1, one of every other listing.
		if wantPages := 8 + 1 + len(Listings) - 2; api.pages != wantPages {
			t.Errorf("JSON %v: %d requests, want %d", asJSON, api.pages, wantPages)
		}
	}
}

// TestMetadataStream_ABodyThatIsNotAListOfMetadataIsAnError: a page cut short, one that is
// neither protobuf nor JSON, JSON of another kind, and the API server's error fail the comparison with an error
// naming the collection and what is wrong, the API's error kept.
func TestMetadataStream_ABodyThatIsNotAListOfMetadataIsAnError(t *testing.T) {
	inf := newFakeInformers()
	inf.add(t, ts.MakePod("ns", "p", ts.WithResourceVersion("1")))
	stream, api := newMetadataStream(t, inf, 10)
	whole := api.encode(httptestRequest(t, "/api/v1/pods?limit=10"))
	h := newCache(t)
	for _, c := range []struct {
		name   string
		status int
		body   []byte
		want   func(error) bool
	}{
		{"cut short", http.StatusOK, whole[:len(whole)-3], func(err error) bool {
			return errors.Is(err, io.ErrUnexpectedEOF) && strings.Contains(err.Error(), "reading a page of /api/v1/pods")
		}},
		{"not a list", http.StatusOK, []byte("<html>proxy error</html>"), func(err error) bool {
			return strings.Contains(err.Error(), "neither protobuf nor a JSON list of metadata")
		}},
		{"expired", http.StatusGone, expiredStatus(t), apierrors.IsResourceExpired},
		// JSON that is no metadata list would read as an empty one: every cached object
		// reported as not in the cluster.
		{"JSON of another kind", http.StatusOK, []byte(`{"apiVersion":"v1","kind":"Status","items":[]}`), func(err error) bool {
			return strings.Contains(err.Error(), "the API answered v1 Status, not a meta.k8s.io/v1 PartialObjectMetadataList")
		}},
		{"empty JSON", http.StatusOK, []byte(`{}`), func(err error) bool {
			return strings.Contains(err.Error(), "not a meta.k8s.io/v1 PartialObjectMetadataList")
		}},
		// The same in protobuf: a Status's fields would read as a garbled list.
		{"protobuf of another kind", http.StatusOK, protobufStatus(t), func(err error) bool {
			return strings.Contains(err.Error(), "the API answered v1 Status, not a meta.k8s.io/v1 PartialObjectMetadataList") &&
				strings.Contains(err.Error(), "/api/v1/pods")
		}},
		{"protobuf without a kind", http.StatusOK, untyped(t, whole), func(err error) bool {
			return strings.Contains(err.Error(), "the protobuf envelope names no kind before its list")
		}},
	} {
		api.body = func(path string) (int, []byte) {
			if path == "/api/v1/pods" {
				return c.status, c.body
			}
			return http.StatusOK, []byte(`{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadataList","metadata":{},"items":[]}`)
		}
		_, err := Compare(context.Background(), h, stream, nil, Listings[0])
		if err == nil || !c.want(err) {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
}

// protobufStatus is a Status as the API server writes it in protobuf.
func protobufStatus(t *testing.T) []byte {
	t.Helper()
	status := apierrors.NewInternalError(errors.New("boom")).Status()
	status.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(&status, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// untyped is the protobuf body whole without its envelope's TypeMeta.
func untyped(t *testing.T, whole []byte) []byte {
	t.Helper()
	out := append([]byte(nil), whole[:4]...)
	b := whole[4:]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		l := protowire.ConsumeFieldValue(num, typ, b[n:])
		if l < 0 {
			t.Fatal(protowire.ParseError(l))
		}
		if num != 1 {
			out = append(out, b[:n+l]...)
		}
		b = b[n+l:]
	}
	return out
}

func httptestRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://api.invalid"+url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// expiredStatus is the API server's answer to a continue token it compacted away.
func expiredStatus(t *testing.T) []byte {
	t.Helper()
	status := apierrors.NewResourceExpired("the continue token is too old").Status()
	status.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	b, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMetadataStream_AllocatesAboutOnePerObject: 10,000 pods that agree, listed in pages of
// 2,000 and compared as they arrive, cost about one allocation each (the name the
// comparison keeps), not the dozen a decoded page costs.
func TestMetadataStream_AllocatesAboutOnePerObject(t *testing.T) {
	h := newCache(t)
	inf := newFakeInformers()
	for i := range 10000 {
		pod := ts.MakePod(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("p%05d", i), ts.OnNode("n"), ts.WithResourceVersion("1"))
		if err := h.Add(pod); err != nil {
			t.Fatal(err)
		}
		inf.add(t, pod)
	}
	stream, _ := newMetadataStream(t, inf, 2000)
	pods := []Listing{Listings[0]}
	var diffs []Difference
	var err error
	// AllocsPerRun's first run, not measured, encodes the pages.
	allocs := testing.AllocsPerRun(3, func() {
		diffs, err = compareKind(context.Background(), h, stream, nil, pods, stores.KindPod)
	})
	if err != nil || len(diffs) != 0 {
		t.Fatalf("differences %+v, %v", diffs, err)
	}
	t.Logf("%.2f allocations a pod", allocs/10000)
	if allocs > 1.5*10000 {
		t.Errorf("comparing 10,000 pods allocated %.0f times, want about one a pod", allocs)
	}
}

// TestNewMetadataStream_ABadConfigIsAnError: a host that is no URL fails with an error
// naming the client and the host.
func TestNewMetadataStream_ABadConfigIsAnError(t *testing.T) {
	_, err := NewMetadataStream(&rest.Config{Host: "http://[::1"}, &http.Client{}, scheme.New(), meta.NewDefaultRESTMapper(nil), APISource{})
	if err == nil || !strings.Contains(err.Error(), "creating the client of the metadata lists") || !strings.Contains(err.Error(), "[::1") {
		t.Errorf("error %v", err)
	}
}
