package stores

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The contract between the handler and its stores, and the vocabulary they share, are
// defined in the public package pkg/multicache/store, so that a store written out of tree
// implements exactly what a built-in one does. These aliases let the built-in stores and
// the handler keep their short names; the dependency runs from here to the public package,
// never back.
type (
	Store              = store.Store
	DeferredDumper     = store.DeferredDumper
	DeferredChecker    = store.DeferredChecker
	TotalsRebuilder    = store.TotalsRebuilder
	Snapshot           = store.Snapshot
	SnapshotOptions    = store.SnapshotOptions
	PodHandler         = store.PodHandler
	NodeHandler        = store.NodeHandler
	NMNodeHandler      = store.NMNodeHandler
	CNRHandler         = store.CNRHandler
	PodGroupHandler    = store.PodGroupHandler
	PDBHandler         = store.PDBHandler
	OwnerHandler       = store.OwnerHandler
	MovementHandler    = store.MovementHandler
	ReservationHandler = store.ReservationHandler
	PodAssumer         = store.PodAssumer

	NodeInfo       = store.NodeInfo
	Resources      = store.Resources
	Accounting     = store.Accounting
	Owner          = store.Owner
	OwnerKey       = store.OwnerKey
	PodState       = store.PodState
	PodStatus      = store.PodStatus
	PodGroupSource = store.PodGroupSource
	Generations    = store.Generations
	SyncResult     = store.SyncResult
)

// Versioned is store.Versioned.
type Versioned[K comparable, V any] = store.Versioned[K, V]

// MapSnapshot is store.MapSnapshot.
type MapSnapshot[K comparable, V any] = store.MapSnapshot[K, V]

// The pod states and PodGroup sources.
const (
	PodAssumed = store.PodAssumed
	PodAdded   = store.PodAdded

	PodGroupSourceMulticache       = store.PodGroupSourceMulticache
	PodGroupSourceNative           = store.PodGroupSourceNative
	PodGroupSourceSchedulerPlugins = store.PodGroupSourceSchedulerPlugins
)

// PodGroupSources lists every source (store.PodGroupSources).
var PodGroupSources = store.PodGroupSources

// NewVersioned is store.NewVersioned.
func NewVersioned[K comparable, V any](gens *Generations) *Versioned[K, V] {
	return store.NewVersioned[K, V](gens)
}

// Sync is store.Sync.
func Sync[K comparable, V, S any](m *Versioned[K, V], dst map[K]S, since int64, clone func(prev S, v V) S, keep func(V) bool) SyncResult {
	return store.Sync(m, dst, since, clone, keep)
}

// NewMapSnapshot is store.NewMapSnapshot.
func NewMapSnapshot[K comparable, V any](name Name) *MapSnapshot[K, V] {
	return store.NewMapSnapshot[K, V](name)
}

// ParsePodGroupSource is store.ParsePodGroupSource.
func ParsePodGroupSource(s string) (PodGroupSource, error) { return store.ParsePodGroupSource(s) }

// PodKey is store.PodKey.
func PodKey(pod *corev1.Pod) types.NamespacedName { return store.PodKey(pod) }

// IsTerminal is store.IsTerminal.
func IsTerminal(pod *corev1.Pod) bool { return store.IsTerminal(pod) }

// IsBestEffort is store.IsBestEffort.
func IsBestEffort(pod *corev1.Pod) bool { return store.IsBestEffort(pod) }

// ControllerOwner is store.ControllerOwner.
func ControllerOwner(pod *corev1.Pod) (OwnerKey, types.UID, bool) { return store.ControllerOwner(pod) }

// NewPlaceholderPod is store.NewPlaceholderPod.
func NewPlaceholderPod(r *v1alpha1.Reservation, node string) *corev1.Pod {
	return store.NewPlaceholderPod(r, node)
}

// PlaceholderOf is store.PlaceholderOf.
func PlaceholderOf(pod *corev1.Pod) (types.NamespacedName, bool) { return store.PlaceholderOf(pod) }

// ResourcesFromList is store.ResourcesFromList.
func ResourcesFromList(list corev1.ResourceList) Resources { return store.ResourcesFromList(list) }

// PodRequests is store.PodRequests.
func PodRequests(pod *corev1.Pod) Resources { return store.PodRequests(pod) }

// IsScalarResourceName is store.IsScalarResourceName.
func IsScalarResourceName(name corev1.ResourceName) bool { return store.IsScalarResourceName(name) }
