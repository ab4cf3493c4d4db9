package operator

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	debugserver "github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkCompare_API runs /debug/cache/compare's comparison (debug.Server.Compare with
// the source New gives a whole replica) at 5,000 nodes and 150,000 pods that agree with
// the cache, against an in-process API that answers the metadata-only protobuf lists as the
// API server does (every object's metadata whole, managedFields included, in key order, in
// pages of the requested limit). The heap holds the cache meanwhile, with the steady GC
// percent. Besides -benchmem's figures per comparison it reports, per listed object, the
// bytes and allocations of the comparison, and how far the heap in use (objects, sampled
// every millisecond) rose above what it was at the comparison's start, just after a
// collection (the worst case: the whole GC headroom is ahead):
//
//	go test ./internal/operator/ -run '^$' -bench BenchmarkCompare_API -benchtime 3x -count 5
func BenchmarkCompare_API(b *testing.B) {
	const nodes, pods = 5000, 150000
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	api := newPagedAPI(b)
	var nodeMeta, podMeta []metav1.PartialObjectMetadata
	for i := range nodes {
		node := ts.MakeNode(fmt.Sprintf("node-%04d", i), "64", "256Gi")
		node.ResourceVersion, node.ManagedFields = strconv.Itoa(100+i), benchManagedFields()
		if err := h.Add(node); err != nil {
			b.Fatal(err)
		}
		nodeMeta = append(nodeMeta, metav1.PartialObjectMetadata{ObjectMeta: node.ObjectMeta})
	}
	for i := range pods {
		pod := benchPod(i)
		pod.Spec.NodeName = fmt.Sprintf("node-%04d", i%nodes)
		if err := h.Add(pod); err != nil {
			b.Fatal(err)
		}
		podMeta = append(podMeta, metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta})
	}
	api.serve("/api/v1/nodes", nodeMeta)
	api.serve("/api/v1/pods", podMeta)
	nodeMeta, podMeta = nil, nil

	s := scheme.New()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, l := range drift.Listings {
		gvk, err := apiutil.GVKForObject(l.Object, s)
		if err != nil {
			b.Fatal(err)
		}
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	reader, err := compareReader(&rest.Config{Host: "http://compare.invalid", Transport: api, QPS: -1}, s, mapper, drift.Listings)
	if err != nil {
		b.Fatal(err)
	}
	srv := debugserver.NewServer("0", h, reader, nil, logr.Discard())
	srv.Listings = drift.Listings
	// As New wires a whole replica's.
	if srv.Source, err = compareStream(&rest.Config{Host: "http://compare.invalid", QPS: -1}, &http.Client{Transport: api}, s, mapper, reader); err != nil {
		b.Fatal(err)
	}

	// The first comparison encodes the pages of its limit.
	if diffs, err := srv.Compare(context.Background()); err != nil || len(diffs) != 0 {
		b.Fatalf("differences %v, %v", diffs, err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	var allocs, bytesAlloc, rise uint64
	for b.Loop() {
		b.StopTimer()
		goruntime.GC()
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		peak := heapSampler()
		b.StartTimer()
		diffs, err := srv.Compare(context.Background())
		b.StopTimer()
		top, start := peak()
		goruntime.ReadMemStats(&after)
		if err != nil || len(diffs) != 0 {
			b.Fatalf("differences %v, %v", diffs, err)
		}
		allocs += after.Mallocs - before.Mallocs
		bytesAlloc += after.TotalAlloc - before.TotalAlloc
		rise += top - start
		b.StartTimer()
	}
	objects := float64(b.N) * (nodes + pods)
	b.ReportMetric(float64(bytesAlloc)/objects, "B/object")
	b.ReportMetric(float64(allocs)/objects, "allocs/object")
	b.ReportMetric(float64(rise)/float64(b.N)/(1<<20), "MiB-heap-rise")
	if api.limit.Load() != nil {
		b.ReportMetric(float64(*api.limit.Load()), "page")
	}
}

// heapSampler samples the heap's objects every millisecond until the returned func is
// called, which returns the highest sample and the first.
func heapSampler() func() (top, start uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	start := read()
	top := start
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				top = max(top, read())
			}
		}
	})
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return max(top, read()), start
	}
}

// pagedAPI answers metadata-only protobuf lists of the collections it serves, in pages of
// the request's limit (the continue token is the offset), and an empty list of any other;
// pages are encoded once per limit, before they are timed.
type pagedAPI struct {
	tb    testing.TB
	codec *protobuf.Serializer
	mu    sync.Mutex
	items map[string][]metav1.PartialObjectMetadata
	pages map[string][]byte
	limit atomicLimit
}

type atomicLimit struct {
	mu sync.Mutex
	v  *int64
}

func (a *atomicLimit) Load() *int64 { a.mu.Lock(); defer a.mu.Unlock(); return a.v }
func (a *atomicLimit) Store(v int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.v = &v
}

func newPagedAPI(tb testing.TB) *pagedAPI {
	s := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(s); err != nil {
		tb.Fatal(err)
	}
	return &pagedAPI{tb: tb, codec: protobuf.NewSerializer(s, s), items: map[string][]metav1.PartialObjectMetadata{}, pages: map[string][]byte{}}
}

// serve has the API answer path with items, sorted by key as the API server lists them.
func (a *pagedAPI) serve(path string, items []metav1.PartialObjectMetadata) {
	slices.SortFunc(items, func(x, y metav1.PartialObjectMetadata) int {
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	a.items[path] = items
}

func (a *pagedAPI) page(path string, limit, offset int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := fmt.Sprintf("%s?%d&%d", path, limit, offset)
	if p, ok := a.pages[id]; ok {
		return p
	}
	items := a.items[path]
	list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}}
	list.ResourceVersion = "999999999"
	if offset < len(items) {
		end := len(items)
		if limit > 0 {
			end = min(end, offset+limit)
		}
		list.Items = items[offset:end]
		if end < len(items) {
			list.Continue = strconv.Itoa(end)
		}
	}
	var buf bytes.Buffer
	if err := a.codec.Encode(list, &buf); err != nil {
		a.tb.Fatal(err)
	}
	a.pages[id] = buf.Bytes()
	return buf.Bytes()
}

// RoundTrip implements http.RoundTripper.
func (a *pagedAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, _ := strconv.Atoi(q.Get("continue"))
	if !strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadataList") {
		a.tb.Errorf("%s asked for %q, not metadata", req.URL, req.Header.Get("Accept"))
	}
	if a.items[req.URL.Path] != nil {
		a.limit.Store(int64(limit))
	}
	body := a.page(req.URL.Path, limit, offset)
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header:        http.Header{"Content-Type": []string{runtime.ContentTypeProtobuf}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}, nil
}
