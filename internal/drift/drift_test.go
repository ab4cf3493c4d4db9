package drift

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// fakeCache holds, per kind, the versions it reports; read counts LastSeenVersions calls
// and onRead, when set, runs before each (to move the cache on between reads).
type fakeCache struct {
	kinds  []stores.Kind
	seen   map[stores.Kind]map[string]string
	reads  int
	onRead func(read int)
}

func (c *fakeCache) WatchedKinds() []stores.Kind { return c.kinds }

func (c *fakeCache) LastSeenVersions(kind stores.Kind) map[string]string {
	c.reads++
	if c.onRead != nil {
		c.onRead(c.reads)
	}
	out := map[string]string{}
	for k, v := range c.seen[kind] {
		out[k] = v
	}
	return out
}

// fakeSource lists a snapshot taken earlier (listed) and reads the objects as they are now
// (current), by listing object type and "namespace/name"; gets records each read.
type fakeSource struct {
	listed, current map[reflect.Type]map[string]string
	gets            []string
	// getErr, when set, is what every Get returns.
	getErr error
}

func objectOf(l Listing, key client.ObjectKey, rv string) client.Object {
	obj := l.Object.DeepCopyObject().(client.Object)
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	obj.SetResourceVersion(rv)
	return obj
}

func (s *fakeSource) Each(_ context.Context, l Listing, fn func(client.Object) error) error {
	for key, rv := range s.listed[reflect.TypeOf(l.Object)] {
		if err := fn(objectOf(l, splitOrFail(key), rv)); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeSource) Get(_ context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	t := reflect.TypeOf(l.Object)
	s.gets = append(s.gets, t.Elem().Name()+" "+key.String())
	if s.getErr != nil {
		return nil, false, s.getErr
	}
	rv, ok := s.current[t][key.String()]
	if !ok {
		return nil, false, nil
	}
	return objectOf(l, key, rv), true, nil
}

func splitOrFail(key string) client.ObjectKey {
	k, _ := splitKey(key)
	return k
}

var (
	podType        = reflect.TypeOf(&corev1.Pod{})
	deploymentType = reflect.TypeOf(&appsv1.Deployment{})
)

func TestCompare_AChangeWhileTheClusterWasListedIsNotADifference(t *testing.T) {
	// Listed: a at 1, b at 1. Since: a moved to 2, b was deleted, c was created; the cache
	// applied all three.
	src := &fakeSource{
		listed:  map[reflect.Type]map[string]string{podType: {"ns/a": "1", "ns/b": "1"}},
		current: map[reflect.Type]map[string]string{podType: {"ns/a": "2", "ns/c": "3"}},
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{
		stores.KindPod: {"ns/a": "2", "ns/c": "3"}}}
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 0 {
		t.Fatalf("changes in flight reported as differences: %+v", diffs)
	}
}

func TestCompare_ADifferenceThatHoldsIsReportedWithTheVersionsReadAgain(t *testing.T) {
	src := &fakeSource{
		listed:  map[reflect.Type]map[string]string{podType: {"ns/stale": "0", "ns/missing": "4"}},
		current: map[reflect.Type]map[string]string{podType: {"ns/stale": "2", "ns/missing": "5"}},
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{
		stores.KindPod: {"ns/stale": "1", "ns/gone": "3"}}}
	defer func(w time.Duration) { recheckWait = w }(recheckWait)
	recheckWait = 0
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{
		{Kind: stores.KindPod, Key: "ns/gone", Problem: NotInCluster, CacheVersion: "3"},
		{Kind: stores.KindPod, Key: "ns/missing", Problem: MissingFromCache, APIVersion: "5"},
		{Kind: stores.KindPod, Key: "ns/stale", Problem: StaleInCache, CacheVersion: "1", APIVersion: "2"},
	}
	if !reflect.DeepEqual(diffs, want) {
		t.Fatalf("differences:\n got %+v\nwant %+v", diffs, want)
	}
	// The listing's read, then recheckRounds reads of the cache.
	if c.reads != 1+recheckRounds {
		t.Fatalf("the cache was read %d times, want %d", c.reads, 1+recheckRounds)
	}
}

func TestCompare_ACacheThatCatchesUpBetweenRechecksHasNoDifference(t *testing.T) {
	src := &fakeSource{
		listed:  map[reflect.Type]map[string]string{podType: {"ns/a": "1"}},
		current: map[reflect.Type]map[string]string{podType: {"ns/a": "2"}},
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{
		stores.KindPod: {"ns/a": "1"}}}
	// The event reaches the cache after the first recheck read it.
	c.onRead = func(read int) {
		if read == 3 {
			c.seen[stores.KindPod]["ns/a"] = "2"
		}
	}
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 0 {
		t.Fatalf("a cache a few milliseconds behind reported as different: %+v", diffs)
	}
}

func TestCompare_AnOwnerIsReadAgainFromItsOwnTypeOnly(t *testing.T) {
	src := &fakeSource{
		listed:  map[reflect.Type]map[string]string{},
		current: map[reflect.Type]map[string]string{deploymentType: {"ns/d": "7"}},
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindOwner}, seen: map[stores.Kind]map[string]string{
		stores.KindOwner: {"Deployment/ns/d": "7"}}}
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 0 {
		t.Fatalf("an owner created during the listing reported: %+v", diffs)
	}
	if want := []string{"Deployment ns/d"}; !reflect.DeepEqual(src.gets, want) {
		t.Fatalf("read again: %v, want %v", src.gets, want)
	}
}

func TestCompare_ACacheFarFromTheClusterIsReportedWithoutReadingEachObject(t *testing.T) {
	listed := map[string]string{}
	for i := 0; i <= maxRechecked; i++ {
		listed["ns/p"+strconv.Itoa(i)] = "1"
	}
	src := &fakeSource{listed: map[reflect.Type]map[string]string{podType: listed}}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{}}
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != maxRechecked+1 || len(src.gets) != 0 {
		t.Fatalf("%d differences after %d reads; want %d after none", len(diffs), len(src.gets), maxRechecked+1)
	}
}

func TestListing_ObjectKeyInvertsKey(t *testing.T) {
	for _, l := range Listings {
		obj := l.Object.DeepCopyObject().(client.Object)
		obj.SetName("n")
		if meta := l.Key(obj); meta == "" {
			t.Fatalf("%T: empty key", l.Object)
		}
		obj.SetNamespace("ns")
		key, ok := l.ObjectKey(l.Key(obj))
		if !ok || key != (client.ObjectKey{Namespace: "ns", Name: "n"}) {
			t.Errorf("%T: ObjectKey(%q) = %v, %v", l.Object, l.Key(obj), key, ok)
		}
	}
	if _, ok := Listings[0].ObjectKey("ns/prefix/name"); ok {
		t.Error("a key with a name holding / was taken for a default listing's")
	}
	if _, ok := ownerListing("ReplicaSet", &appsv1.ReplicaSet{}, nil).ObjectKey("Deployment/ns/d"); ok {
		t.Error("a Deployment's key was taken for a ReplicaSet's")
	}
}

func TestCompare_ADifferenceThatCannotBeReadAgainIsReportedAsListed(t *testing.T) {
	src := &fakeSource{
		listed: map[reflect.Type]map[string]string{podType: {"ns/a": "1"}},
		getErr: errors.New("429: too many requests"),
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{}}
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil {
		t.Fatalf("one failed read failed the comparison: %v", err)
	}
	want := []Difference{{Kind: stores.KindPod, Key: "ns/a", Problem: MissingFromCache, APIVersion: "1"}}
	if !reflect.DeepEqual(diffs, want) {
		t.Fatalf("differences %+v, want %+v", diffs, want)
	}
}
