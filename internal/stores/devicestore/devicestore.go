// Package devicestore keeps the DRA devices (resource.k8s.io/v1) of every node as
// kube-scheduler v1.37's DRA plugin counts them: the devices the node's resource pools
// publish, the devices ResourceClaims hold, what is free, by driver and pool and by
// DeviceClass.
//
// Published devices follow kube-scheduler's pool gathering per node: a slice reaches a node
// through spec.nodeName, spec.allNodes, spec.nodeSelector or, with perDeviceNodeSelection,
// the same fields of each device; of the slices of a pool reaching a node, the newest
// generation counts (an older one still counts on a node the newest does not reach, while
// it is complete: kube-scheduler's rule, checked by the bench differential); a pool whose
// generation lacks some of its resourceSliceCount slices is incomplete (flagged, none of
// its devices counted: kube-scheduler allocates none of them), and one that names a device
// twice is invalid (likewise). Devices reaching a node other than through its name are
// marked shared.
//
// Allocated devices are read from claims' status.allocation exactly as kube-scheduler's
// claim tracker does (with its types, k8s.io/dynamic-resource-allocation/structured): a
// result with admin
// access is not counted, a result with a shareID is one share of a device allowing multiple
// allocations (with its consumed capacity), any other result holds its device alone.
//
// DeviceClasses are matched with k8s.io/dynamic-resource-allocation/cel, the evaluator
// kube-scheduler uses: a device is in a class when every CEL selector of the class accepts
// it. A device is evaluated when its slice arrives (unless an equal version of it was) and
// when a class changes, never on a claim's event.
//
// The cluster's counts (ClusterCounts, multicache_devices) are kept as events arrive, so a
// scrape reads one entry per class (totals.go).
//
// When no slice, claim or class exists the store holds nothing but the names and labels of
// the nodes it is told about.
package devicestore

import (
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// DeviceID names a device: driver, pool and device name (kube-scheduler's own type).
type DeviceID = structured.DeviceID

// celCacheSize bounds the compiled class selectors kept; kube-scheduler keeps 10, for the
// expressions of one scheduling cycle; a store matches every class against every device.
const celCacheSize = 1024

// Store is the DeviceStore.
type Store struct {
	h *stores.CacheHandler

	// nodes are the known nodes, for node selectors and the unknown-node check.
	nodes map[string]*corev1.Node
	// slices by name; pools by driver and pool name.
	slices map[string]*resourcev1.ResourceSlice
	pools  map[poolKey]*pool
	// selective are the pools some slice of which reaches nodes by selector or all nodes: a
	// node's change re-gathers only those.
	selective map[poolKey]*pool

	// claims are the claims holding devices; holders the holders of each device.
	claims  map[types.NamespacedName][]allocation
	holders map[DeviceID]*holders
	// assumed are the claims whose charge is a scheduler's assumption (assume.go).
	assumed map[types.NamespacedName]struct{}

	classes  map[string]*class
	celCache *cel.Cache
	// classSets interns the sets of classes devices are in.
	classSets *classSets
	// extended maps extended resource names to the classes serving them; extendedClaims
	// are the pods' extended-resource claims (extended.go).
	extended       *extendedresourcecache.ExtendedResourceCache
	extendedClaims map[types.NamespacedName]extendedClaim

	// views are the devices of each node, versioned for snapshots.
	views *store.Versioned[string, nodeEntry]
	// totals are the cluster's devices (totals.go); miscounted is set by a self-check that
	// found them wrong, cleared by one that found them right (RebuildTotals acts only then).
	totals     totals
	miscounted atomic.Bool
}

var (
	_ store.Store                = (*Store)(nil)
	_ store.NodeHandler          = (*Store)(nil)
	_ store.ResourceSliceHandler = (*Store)(nil)
	_ store.ResourceClaimHandler = (*Store)(nil)
	_ store.DeviceClassHandler   = (*Store)(nil)
	_ store.TotalsRebuilder      = (*Store)(nil)
)

// New returns an empty DeviceStore.
func New(h *stores.CacheHandler) *Store {
	s := &Store{
		h:              h,
		nodes:          map[string]*corev1.Node{},
		slices:         map[string]*resourcev1.ResourceSlice{},
		pools:          map[poolKey]*pool{},
		selective:      map[poolKey]*pool{},
		claims:         map[types.NamespacedName][]allocation{},
		holders:        map[DeviceID]*holders{},
		assumed:        map[types.NamespacedName]struct{}{},
		classes:        map[string]*class{},
		celCache:       cel.NewCache(celCacheSize, cel.Features{EnableConsumableCapacity: true}),
		classSets:      newClassSets(),
		extended:       extendedresourcecache.NewExtendedResourceCache(logr.Discard()),
		views:          store.NewVersioned[string, nodeEntry](h.Generations()),
		totals:         newTotals(),
		extendedClaims: map[types.NamespacedName]extendedClaim{},
	}
	h.SetExtendedResourceResolver(s.ExtendedResourceClass)
	return s
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.DeviceStoreName }

// Len implements stores.Store: slices, claims holding devices and classes.
func (s *Store) Len() int { return len(s.slices) + len(s.claims) + len(s.classes) }

// AddNode records a node and gathers, for it, the pools that reach nodes by selector.
func (s *Store) AddNode(node *corev1.Node) {
	s.nodes[node.Name] = node
	s.gatherNode(node.Name)
}

// UpdateNode re-gathers the selective pools when the node's labels changed.
func (s *Store) UpdateNode(oldNode, newNode *corev1.Node) {
	s.nodes[newNode.Name] = newNode
	if !labels.Equals(oldNode.Labels, newNode.Labels) {
		s.gatherNode(newNode.Name)
	}
}

// DeleteNode forgets a node; slices naming it stay (reported by CheckInvariants).
func (s *Store) DeleteNode(node *corev1.Node) {
	delete(s.nodes, node.Name)
	s.gatherNode(node.Name)
}

// AddResourceSlice adds a slice to its pool and re-gathers the pool.
func (s *Store) AddResourceSlice(slice *resourcev1.ResourceSlice) {
	s.slices[slice.Name] = slice
	key := poolKeyOf(slice)
	p := s.pools[key]
	if p == nil {
		p = newPool(key)
		s.pools[key] = p
	}
	p.slices[slice.Name] = slice
	s.gather(p)
}

// UpdateResourceSlice replaces a slice (possibly moving it to another pool).
func (s *Store) UpdateResourceSlice(oldSlice, newSlice *resourcev1.ResourceSlice) {
	if poolKeyOf(oldSlice) != poolKeyOf(newSlice) {
		s.DeleteResourceSlice(oldSlice)
	}
	s.AddResourceSlice(newSlice)
}

// DeleteResourceSlice removes a slice and re-gathers its pool.
func (s *Store) DeleteResourceSlice(slice *resourcev1.ResourceSlice) {
	delete(s.slices, slice.Name)
	key := poolKeyOf(slice)
	p := s.pools[key]
	if p == nil {
		return
	}
	delete(p.slices, slice.Name)
	s.gather(p)
	if len(p.slices) == 0 {
		delete(s.pools, key)
		delete(s.selective, key)
	}
}

// AddResourceClaim charges the devices of an allocated claim.
func (s *Store) AddResourceClaim(claim *resourcev1.ResourceClaim) {
	key := claimKey(claim)
	s.unassume(key)
	allocs := allocationsOf(claim)
	if len(allocs) == 0 {
		return
	}
	s.claims[key] = allocs
	for _, a := range allocs {
		s.hold(key, a)
	}
}

// UpdateResourceClaim re-charges a claim whose allocation changed; an assumption the API
// confirms, or one forgotten, ends here.
func (s *Store) UpdateResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim) {
	s.unassume(claimKey(newClaim))
	if equality.Semantic.DeepEqual(oldClaim.Status.Allocation, newClaim.Status.Allocation) {
		return
	}
	s.DeleteResourceClaim(oldClaim)
	s.AddResourceClaim(newClaim)
}

// DeleteResourceClaim releases the devices of a claim.
func (s *Store) DeleteResourceClaim(claim *resourcev1.ResourceClaim) {
	key := claimKey(claim)
	s.unassume(key)
	allocs, ok := s.claims[key]
	if !ok {
		return
	}
	delete(s.claims, key)
	for _, a := range allocs {
		s.release(key, a)
	}
}

// AddDeviceClass compiles a class and matches it against every published device.
func (s *Store) AddDeviceClass(dc *resourcev1.DeviceClass) {
	s.extended.OnAdd(dc, false)
	s.h.ExtendedResourcesChanged(namesOf(dc)...)
	s.setClass(dc)
}

// UpdateDeviceClass re-matches a class whose selectors changed. Even a change that keeps
// its extendedResourceName may change the extended resources' map: where two classes name
// one resource, the library keeps one of them, and which depends on the order of the
// events (a class that lost the name to another takes it when updated after the other
// left it).
func (s *Store) UpdateDeviceClass(oldClass, newClass *resourcev1.DeviceClass) {
	s.extended.OnUpdate(oldClass, newClass)
	s.h.ExtendedResourcesChanged(append(namesOf(oldClass), namesOf(newClass)...)...)
	c, ok := s.classes[newClass.Name]
	if ok && equality.Semantic.DeepEqual(oldClass.Spec.Selectors, newClass.Spec.Selectors) {
		c.class = newClass
		return
	}
	s.setClass(newClass)
}

// DeleteDeviceClass removes a class from every device.
func (s *Store) DeleteDeviceClass(dc *resourcev1.DeviceClass) {
	s.extended.OnDelete(dc)
	s.h.ExtendedResourcesChanged(namesOf(dc)...)
	delete(s.classes, dc.Name)
	s.rematchClass(dc.Name, nil)
	delete(s.totals.byClass, dc.Name)
}
