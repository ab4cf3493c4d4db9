// Package drift compares the cache with a view of the cluster: the API itself (the debug
// server's on-demand /debug/cache/compare) or the manager's informers (the verify loop, which
// must not load the API server). A difference is an object whose resource version the cache
// does not hold: missing from the cache, stale in it, or gone from the cluster.
package drift

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Problems a Difference reports.
const (
	MissingFromCache = "missing from cache"
	StaleInCache     = "stale in cache"
	NotInCluster     = "not in API"
)

// Difference is one object on which the cache and the cluster disagree.
type Difference struct {
	Kind stores.Kind `json:"kind"`
	Key  string      `json:"key"`
	// Problem is "missing from cache", "stale in cache" (another resource version) or
	// "not in API".
	Problem      string `json:"problem"`
	CacheVersion string `json:"cacheVersion,omitempty"`
	APIVersion   string `json:"apiVersion,omitempty"`
}

// Cache is what the comparison reads from the cache.
type Cache interface {
	// WatchedKinds are the kinds the cache holds.
	WatchedKinds() []stores.Kind
	// LastSeenVersions maps the key of every object of a kind the cache holds to its
	// resource version.
	LastSeenVersions(kind stores.Kind) map[string]string
}

// KeepFunc reports whether a cluster object of a kind belongs in the cache (a sub-cluster
// keeps only its part).
type KeepFunc func(ctx context.Context, kind stores.Kind, obj client.Object) (bool, error)

// Source lists the cluster's objects of one listing, and reads one of them again.
type Source interface {
	Each(ctx context.Context, l Listing, fn func(client.Object) error) error
	// Get reads the object of the listing named key as the cluster holds it now; found is
	// false when the cluster does not hold it.
	Get(ctx context.Context, l Listing, key client.ObjectKey) (obj client.Object, found bool, err error)
}

// Listing is one type of object the cache is fed from, keyed like the cache's last-seen.
type Listing struct {
	Kind stores.Kind
	// Object is an empty object of the type; List an empty list of it.
	Object client.Object
	List   func() client.ObjectList
	// key renders an item's key; nil means namespace/name (or name when cluster-scoped).
	key func(client.Object) string
	// objectKey names the object behind a key of this listing, false when the key cannot be
	// one of its objects; nil is the inverse of the default key.
	objectKey func(key string) (client.ObjectKey, bool)
	// ownerType is the type of the workload owners listed, "" for other kinds.
	ownerType string
}

// Listings are the types of object the feeds read, in the order they are compared.
var Listings = []Listing{
	{stores.KindPod, &corev1.Pod{}, func() client.ObjectList { return &corev1.PodList{} }, nil, nil, ""},
	{stores.KindNode, &corev1.Node{}, func() client.ObjectList { return &corev1.NodeList{} }, nil, nil, ""},
	{stores.KindNMNode, &v1alpha1.NMNode{}, func() client.ObjectList { return &v1alpha1.NMNodeList{} }, nil, nil, ""},
	{stores.KindCNR, &v1alpha1.CustomNodeResource{}, func() client.ObjectList { return &v1alpha1.CustomNodeResourceList{} }, nil, nil, ""},
	{stores.KindPodGroup, &v1alpha1.PodGroup{}, func() client.ObjectList { return &v1alpha1.PodGroupList{} }, nil, nil, ""},
	{stores.KindPDB, &policyv1.PodDisruptionBudget{}, func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }, nil, nil, ""},
	{stores.KindMovement, &v1alpha1.Movement{}, func() client.ObjectList { return &v1alpha1.MovementList{} }, nil, nil, ""},
	{stores.KindReservation, &v1alpha1.Reservation{}, func() client.ObjectList { return &v1alpha1.ReservationList{} }, nil, nil, ""},
	{stores.KindResourceSlice, &resourcev1.ResourceSlice{}, func() client.ObjectList { return &resourcev1.ResourceSliceList{} }, nil, nil, ""},
	{stores.KindResourceClaim, &resourcev1.ResourceClaim{}, func() client.ObjectList { return &resourcev1.ResourceClaimList{} }, nil, nil, ""},
	{stores.KindDeviceClass, &resourcev1.DeviceClass{}, func() client.ObjectList { return &resourcev1.DeviceClassList{} }, nil, nil, ""},
	ownerListing(v1alpha1.OwnerReplicaSet, &appsv1.ReplicaSet{}, func() client.ObjectList { return &appsv1.ReplicaSetList{} }),
	ownerListing(v1alpha1.OwnerStatefulSet, &appsv1.StatefulSet{}, func() client.ObjectList { return &appsv1.StatefulSetList{} }),
	ownerListing(v1alpha1.OwnerDaemonSet, &appsv1.DaemonSet{}, func() client.ObjectList { return &appsv1.DaemonSetList{} }),
	ownerListing(v1alpha1.OwnerJob, &batchv1.Job{}, func() client.ObjectList { return &batchv1.JobList{} }),
	ownerListing(v1alpha1.OwnerDeployment, &appsv1.Deployment{}, func() client.ObjectList { return &appsv1.DeploymentList{} }),
}

// NewListing returns a listing of kind whose items the cache keys by key (a source of pod
// groups other than multicache's own keys them by source), for Compare; objectKey is key's
// inverse: the object a key names, false when the key is not one of this listing's.
func NewListing(kind stores.Kind, obj client.Object, list func() client.ObjectList,
	key func(client.Object) string, objectKey func(key string) (client.ObjectKey, bool)) Listing {
	return Listing{Kind: kind, Object: obj, List: list, key: key, objectKey: objectKey}
}

// ownerListing lists one type of workload owner, keyed "Type/namespace/name".
func ownerListing(t v1alpha1.OwnerType, obj client.Object, list func() client.ObjectList) Listing {
	prefix := string(t) + "/"
	l := NewListing(stores.KindOwner, obj, list,
		func(o client.Object) string {
			return store.OwnerKey{Type: t, Namespace: o.GetNamespace(), Name: o.GetName()}.String()
		},
		func(key string) (client.ObjectKey, bool) {
			rest, ok := strings.CutPrefix(key, prefix)
			if !ok {
				return client.ObjectKey{}, false
			}
			return splitKey(rest)
		})
	l.ownerType = string(t)
	return l
}

// ObjectKey names the object behind a key of this listing, false when the key cannot be
// one of its objects.
func (l Listing) ObjectKey(key string) (client.ObjectKey, bool) {
	if l.objectKey != nil {
		return l.objectKey(key)
	}
	return splitKey(key)
}

// splitKey is the inverse of the default key: "namespace/name", or "name". An object's
// name has no "/", so a longer key is another listing's.
func splitKey(key string) (client.ObjectKey, bool) {
	if ns, name, ok := strings.Cut(key, "/"); ok {
		return client.ObjectKey{Namespace: ns, Name: name}, !strings.Contains(name, "/")
	}
	return client.ObjectKey{Name: key}, true
}

// Key renders the key of a cluster object of this listing as the cache reports it.
func (l Listing) Key(obj client.Object) string {
	switch {
	case l.key != nil:
		return l.key(obj)
	case obj.GetNamespace() != "":
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Compare lists, for every kind the cache watches, the objects on which the cache and the
// cluster (as src lists it, filtered by keep when set) disagree, sorted by kind and key.
// Assumed pods the API has not reported yet are not differences, nor is an object that
// changed while the cluster was listed and that the cache holds as the cluster does when
// read again (see recheck). listings, when given, replace Listings (the operator's follow
// the PodGroup sources it watches).
func Compare(ctx context.Context, c Cache, src Source, keep KeepFunc, listings ...Listing) ([]Difference, error) {
	if len(listings) == 0 {
		listings = Listings
	}
	// The kinds are listed side by side (pods take most of the time, the other kinds come
	// along), a few at a time so that the API server and the memory held stay bounded. A
	// source held in memory (the informers' stores, the verify loop's) has nothing to wait
	// for: its kinds are compared one at a time, so that a comparison takes one CPU and
	// leaves the others to the events (side by side they took every CPU of a small machine).
	var mu sync.Mutex
	diffs := []Difference{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(CompareConcurrency)
	if _, inMemory := src.(heldSource); inMemory {
		g.SetLimit(1)
	}
	for _, kind := range c.WatchedKinds() {
		g.Go(func() error {
			found, err := compareKindOnExpiry(gctx, c, src, keep, listings, kind)
			mu.Lock()
			diffs = append(diffs, found...)
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	diffs, err := recheck(ctx, c, src, keep, listings, diffs)
	if err != nil {
		return nil, err
	}
	sort.Slice(diffs, func(i, j int) bool {
		if diffs[i].Kind != diffs[j].Kind {
			return diffs[i].Kind < diffs[j].Kind
		}
		return diffs[i].Key < diffs[j].Key
	})
	// A cache walked in parts may produce an object that changed meanwhile twice.
	return slices.Compact(diffs), nil
}

// CompareConcurrency is how many kinds Compare lists at once (bench-e2e's list floor lists
// as many).
const CompareConcurrency = 4

// compareKind lists one kind from src and compares it with what the cache last saw.
func compareKind(ctx context.Context, c Cache, src Source, keep KeepFunc, listings []Listing, kind stores.Kind) ([]Difference, error) {
	if vr, ok := c.(VersionReader); ok && refable(listings, kind) {
		if held, ok := src.(heldSource); ok {
			if diffs, ok, err := compareHeld(ctx, vr, held, keep, listings, kind); ok || err != nil {
				return diffs, err
			}
		} else {
			return compareStreamed(ctx, vr, src, keep, listings, kind)
		}
	}
	var diffs []Difference
	cluster := map[string]string{}
	for _, l := range listings {
		if l.Kind != kind {
			continue
		}
		err := src.Each(ctx, l, func(obj client.Object) error {
			if keep != nil {
				if ok, err := keep(ctx, kind, obj); err != nil || !ok {
					return err
				}
			}
			cluster[l.Key(obj)] = obj.GetResourceVersion()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", kind, err)
		}
	}
	cached := c.LastSeenVersions(kind)
	for key, clusterRV := range cluster {
		cacheRV, ok := cached[key]
		switch {
		case !ok:
			diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: MissingFromCache, APIVersion: clusterRV})
		case cacheRV != clusterRV:
			diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: StaleInCache, CacheVersion: cacheRV, APIVersion: clusterRV})
		}
	}
	for key, cacheRV := range cached {
		if _, ok := cluster[key]; !ok {
			diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: NotInCluster, CacheVersion: cacheRV})
		}
	}
	return diffs, nil
}
