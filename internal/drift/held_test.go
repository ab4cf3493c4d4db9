package drift

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var _ VersionReader = (*handler.Handler)(nil)

// fakeInformers serves, by object type, informers whose stores the test fills (an empty
// one for any other type). Only GetInformer is implemented.
type fakeInformers struct {
	cache.Informers
	stores map[reflect.Type]toolscache.Store
}

type fakeInformer struct {
	cache.Informer
	store toolscache.Store
}

func (i fakeInformer) GetStore() toolscache.Store { return i.store }

func (f *fakeInformers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	if s := f.stores[reflect.TypeOf(obj)]; s != nil {
		return fakeInformer{store: s}, nil
	}
	return fakeInformer{store: toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)}, nil
}

func (f *fakeInformers) add(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if f.stores[reflect.TypeOf(obj)] == nil {
			f.stores[reflect.TypeOf(obj)] = toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
		}
		if err := f.stores[reflect.TypeOf(obj)].Add(obj); err != nil {
			t.Fatal(err)
		}
	}
}

func newFakeInformers() *fakeInformers {
	return &fakeInformers{stores: map[reflect.Type]toolscache.Store{}}
}

// pagedSource lists like /debug/cache/compare reads the API: fresh copies of the objects'
// metadata (what a page decodes into), gone once the caller has seen them (it hides
// InformerSource's held objects).
type pagedSource struct{ src InformerSource }

func (p pagedSource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	return p.src.Each(ctx, l, func(obj client.Object) error {
		m := &metav1.PartialObjectMetadata{}
		m.Namespace, m.Name = strings.Clone(obj.GetNamespace()), strings.Clone(obj.GetName())
		m.ResourceVersion, m.UID = strings.Clone(obj.GetResourceVersion()), obj.GetUID()
		return fn(m)
	})
}

func (p pagedSource) Get(ctx context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	return p.src.Get(ctx, l, key)
}

// mapsOnly hides a cache's VersionReader: Compare copies its versions into maps, as it
// did for every cache before.
type mapsOnly struct{ Cache }

func newCache(t testing.TB) *handler.Handler {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return handler.New(config, logr.Discard())
}

func withRV[T client.Object](obj T, rv string) T {
	obj.SetResourceVersion(rv)
	return obj
}

func deployment(ns, name, rv string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func replicaSet(ns, name, rv string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func owner(t v1alpha1.OwnerType, ns, name, rv string) *store.Owner {
	o := ts.MakeOwner(t, ns, name)
	o.ResourceVersion = rv
	return o
}

// TestCompare_WithInformersFindsWhatTheMapsFind: the handler compared with informers where
// both hold their objects (no copy per object) finds, for pods, nodes and owners (two types
// under one namespace and name), every kind of difference the comparison through copied
// maps finds, keyed and versioned the same, and nothing on objects that agree.
func TestCompare_WithInformersFindsWhatTheMapsFind(t *testing.T) {
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
	inf.add(t, withRV(ts.MakeNode("new-node", "8", "32Gi"), "1")) // missing from the cache
	for i := range 50 {
		// Namespaces one the prefix of another: the sort by namespace, then name.
		pod := ts.MakePod([]string{"a", "a-b", "ab"}[i%3], fmt.Sprintf("p%02d", i), ts.OnNode("n0"), ts.WithResourceVersion("1"))
		must(h.Add(pod))
		switch i {
		case 7: // stale in the cache
			inf.add(t, withRV(pod.DeepCopy(), "2"))
		case 8: // deleted from the cluster, not from the cache
		default:
			inf.add(t, pod)
		}
	}
	inf.add(t, ts.MakePod("a", "new", ts.OnNode("n1"), ts.WithResourceVersion("3")))
	must(h.Add(owner(v1alpha1.OwnerDeployment, "a", "web", "5")))
	must(h.Add(owner(v1alpha1.OwnerReplicaSet, "a", "web", "6")))
	must(h.Add(owner(v1alpha1.OwnerStatefulSet, "a", "db", "1")))
	inf.add(t, deployment("a", "web", "5"), replicaSet("a", "web", "7"), &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", ResourceVersion: "8"}})

	src := InformerSource{Informers: inf}
	held, err := Compare(context.Background(), h, src, nil)
	must(err)
	maps, err := Compare(context.Background(), mapsOnly{h}, src, nil)
	must(err)
	paged, err := Compare(context.Background(), h, pagedSource{src}, nil)
	must(err)
	want := []Difference{
		{Kind: stores.KindNode, Key: "new-node", Problem: MissingFromCache, APIVersion: "1"},
		{Kind: stores.KindOwner, Key: "DaemonSet/a/web", Problem: MissingFromCache, APIVersion: "8"},
		{Kind: stores.KindOwner, Key: "ReplicaSet/a/web", Problem: StaleInCache, CacheVersion: "6", APIVersion: "7"},
		{Kind: stores.KindOwner, Key: "StatefulSet/a/db", Problem: NotInCluster, CacheVersion: "1"},
		{Kind: stores.KindPod, Key: "a-b/p07", Problem: StaleInCache, CacheVersion: "1", APIVersion: "2"},
		{Kind: stores.KindPod, Key: "a/new", Problem: MissingFromCache, APIVersion: "3"},
		{Kind: stores.KindPod, Key: "ab/p08", Problem: NotInCluster, CacheVersion: "1"},
	}
	if !reflect.DeepEqual(held, want) {
		t.Errorf("with the handler's versions where they are:\n got %+v\nwant %+v", held, want)
	}
	if !reflect.DeepEqual(maps, want) {
		t.Errorf("with the versions copied into maps:\n got %+v\nwant %+v", maps, want)
	}
	if !reflect.DeepEqual(paged, want) {
		t.Errorf("listed in pages, compared as they arrive:\n got %+v\nwant %+v", paged, want)
	}
}

// TestCompare_WithInformersAllocatesNothingPerObject: 10,000 pods that agree are compared
// with a handful of allocations, not one or more per pod.
func TestCompare_WithInformersAllocatesNothingPerObject(t *testing.T) {
	h := newCache(t)
	inf := newFakeInformers()
	for i := range 10000 {
		pod := ts.MakePod(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("p%05d", i), ts.OnNode("n"), ts.WithResourceVersion("1"))
		if err := h.Add(pod); err != nil {
			t.Fatal(err)
		}
		inf.add(t, pod)
	}
	src := InformerSource{Informers: inf}
	pods := []Listing{Listings[0]}
	var diffs []Difference
	allocs := testing.AllocsPerRun(3, func() {
		diffs, _ = compareKind(context.Background(), h, src, nil, pods, stores.KindPod)
	})
	if len(diffs) != 0 {
		t.Fatalf("differences %+v", diffs)
	}
	if allocs > 100 {
		t.Errorf("comparing 10,000 pods allocated %.0f times, want a handful", allocs)
	}
	allocs = testing.AllocsPerRun(3, func() {
		diffs, _ = compareKind(context.Background(), mapsOnly{h}, src, nil, pods, stores.KindPod)
	})
	if allocs < 10000 {
		t.Errorf("the comparison through maps allocated %.0f times: the test does not measure what it says", allocs)
	}
}

// twiceCache produces every object twice, as a cache walked in parts may when an object
// changes between two parts.
type twiceCache struct {
	seen map[types.NamespacedName]string
}

func (c twiceCache) WatchedKinds() []stores.Kind                    { return []stores.Kind{stores.KindPod} }
func (c twiceCache) LastSeenVersions(stores.Kind) map[string]string { return nil }
func (c twiceCache) RangeVersions(_ stores.Kind, fn func(string, types.NamespacedName, string)) bool {
	for range 2 {
		for key, rv := range c.seen {
			fn("", key, rv)
		}
	}
	return true
}
func (c twiceCache) LastSeenVersion(_ stores.Kind, _ string, key types.NamespacedName) (string, bool) {
	rv, ok := c.seen[key]
	return rv, ok
}

// TestCompare_AnObjectProducedTwiceIsReportedOnce.
func TestCompare_AnObjectProducedTwiceIsReportedOnce(t *testing.T) {
	defer func(w time.Duration) { recheckWait = w }(recheckWait)
	recheckWait = 0
	c := twiceCache{seen: map[types.NamespacedName]string{{Namespace: "ns", Name: "stale"}: "1", {Namespace: "ns", Name: "gone"}: "1"}}
	inf := newFakeInformers()
	inf.add(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stale", ResourceVersion: "2"}})
	diffs, err := Compare(context.Background(), c, InformerSource{Informers: inf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{
		{Kind: stores.KindPod, Key: "ns/gone", Problem: NotInCluster, CacheVersion: "1"},
		{Kind: stores.KindPod, Key: "ns/stale", Problem: StaleInCache, CacheVersion: "1", APIVersion: "2"},
	}
	if !reflect.DeepEqual(diffs, want) {
		t.Errorf("differences:\n got %+v\nwant %+v", diffs, want)
	}
}

// TestCompare_AListingKeyedOtherwiseIsComparedThroughTheMaps: a kind one of whose listings
// keys its objects otherwise than by their names (a PodGroup source's) is compared through
// LastSeenVersions' keys, as before, and its differences read again the same way.
func TestCompare_AListingKeyedOtherwiseIsComparedThroughTheMaps(t *testing.T) {
	defer func(w time.Duration) { recheckWait = w }(recheckWait)
	recheckWait = 0
	h := newCache(t)
	pg := ts.MakePodGroup("ns", "g", 1)
	pg.ResourceVersion = "1"
	if err := h.Add(pg); err != nil {
		t.Fatal(err)
	}
	inf := newFakeInformers()
	inf.add(t, pg)
	sourced := NewListing(stores.KindPodGroup, &v1alpha1.PodGroup{}, Listings[4].List,
		func(o client.Object) string { return "source:" + o.GetNamespace() + "/" + o.GetName() },
		func(key string) (client.ObjectKey, bool) {
			rest, ok := strings.CutPrefix(key, "source:")
			if !ok {
				return client.ObjectKey{}, false
			}
			return splitKey(rest)
		})
	if refable([]Listing{sourced}, stores.KindPodGroup) {
		t.Fatal("a listing keyed by source taken for one keyed by names")
	}
	diffs, err := Compare(context.Background(), h, InformerSource{Informers: inf}, nil, sourced)
	if err != nil {
		t.Fatal(err)
	}
	// The cache keys the group "ns/g", the listing "source:ns/g": through the maps, both
	// sides are reported (what the operator avoids by keying its store like its listings).
	want := []Difference{
		{Kind: stores.KindPodGroup, Key: "ns/g", Problem: NotInCluster, CacheVersion: "1"},
		{Kind: stores.KindPodGroup, Key: "source:ns/g", Problem: MissingFromCache, APIVersion: "1"},
	}
	if !reflect.DeepEqual(diffs, want) {
		t.Errorf("differences:\n got %+v\nwant %+v", diffs, want)
	}
}
