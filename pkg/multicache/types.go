package multicache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// The store contract. These are aliases of the types the built-in stores use: one
// definition, the same for a store in this repository and one in yours.
type (
	// Store is what every store implements (Name, Len, Dump, CheckInvariants, snapshots).
	Store = stores.Store
	// StoreName identifies a store: its --stores value, metric label and dump key.
	StoreName = stores.Name
	// StoreFactory builds a store from the CacheHandler; an error stops the start-up.
	StoreFactory = handler.Factory
	// CacheHandler is the configuration every store receives and the callbacks through
	// which stores reach each other (GetNodeInfo, GetPodState, PodOp, Generations, Clock).
	CacheHandler = stores.CacheHandler
	// StoreSnapshot is a store's part of a snapshot.
	StoreSnapshot = stores.Snapshot
	// SnapshotOptions shape a store's snapshot (a sub-cluster's node filter).
	SnapshotOptions = stores.SnapshotOptions
	// DeferredDumper is implemented by a store whose dump is large.
	DeferredDumper = stores.DeferredDumper
	// DeferredChecker is implemented by a store whose invariant check is costly: the part
	// that needs the lock runs under it, the rest after it.
	DeferredChecker = stores.DeferredChecker
	// PodAssumer is implemented by a PodHandler that must tell an assumption (a scheduler
	// placing the pod now) from a pod the API reports.
	PodAssumer = stores.PodAssumer
	// Generations hands out the generation numbers of incremental snapshots.
	Generations = stores.Generations
)

// Versioned is a map whose entries remember the generation of their last change, so that a
// store's snapshot copies only what changed (see SyncVersioned).
type Versioned[K comparable, V any] = stores.Versioned[K, V]

// NewVersioned returns an empty Versioned drawing generations from gens
// (CacheHandler.Generations()).
func NewVersioned[K comparable, V any](gens *Generations) *Versioned[K, V] {
	return stores.NewVersioned[K, V](gens)
}

// SyncVersioned brings dst, a copy of m taken at generation since, up to date: clone makes
// the copy of a changed entry, keep (nil: all) filters. It is how a store's UpdateSnapshot
// copies only what changed.
func SyncVersioned[K comparable, V, S any](m *Versioned[K, V], dst map[K]S, since int64, clone func(prev S, v V) S, keep func(V) bool) {
	stores.Sync(m, dst, since, clone, keep)
}

// The event interfaces: a store receives the events of a kind exactly when it implements
// that kind's interface.
type (
	PodHandler         = stores.PodHandler
	NodeHandler        = stores.NodeHandler
	NMNodeHandler      = stores.NMNodeHandler
	CNRHandler         = stores.CNRHandler
	PodGroupHandler    = stores.PodGroupHandler
	PDBHandler         = stores.PDBHandler
	OwnerHandler       = stores.OwnerHandler
	MovementHandler    = stores.MovementHandler
	ReservationHandler = stores.ReservationHandler
)

// The shared vocabulary.
type (
	// NodeInfo is one node's merged view (Node, NMNode, CNR, pods, placeholders).
	NodeInfo = stores.NodeInfo
	// Resources are cpu, memory and the other resources of a node or pod.
	Resources = stores.Resources
	// Owner is a workload that owns pods (ReplicaSet, StatefulSet, DaemonSet, Deployment).
	Owner = stores.Owner
	// OwnerKey identifies an Owner.
	OwnerKey = stores.OwnerKey
	// PodStatus is a pod's state in the assumed-pod state machine.
	PodStatus = stores.PodStatus
)

// The built-in store names.
const (
	NodeStoreName        = stores.NodeStoreName
	PodStoreName         = stores.PodStoreName
	PodGroupStoreName    = stores.PodGroupStoreName
	PDBStoreName         = stores.PDBStoreName
	MovementStoreName    = stores.MovementStoreName
	ReservationStoreName = stores.ReservationStoreName
)

// The cache and its readers.
type (
	// Cache is the cache handler: the ClusterEventsHandler the feeds call, the Reader,
	// snapshots (NewSnapshot, UpdateSnapshot) and ReadStore.
	Cache = handler.Handler
	// Reader is the read API of the built-in stores.
	Reader = handler.Reader
	// Snapshot is a consistent copy of every enabled store; Part(name) is one store's.
	Snapshot = handler.Snapshot
	// CacheSnapshotOptions shape a Snapshot.
	CacheSnapshotOptions = handler.SnapshotOptions
	// Dump is the JSON view of the cache served at /debug/cache.
	Dump = handler.Dump
)

// The operator.
type (
	// Options are the operator's options; DefaultOptions documents the defaults, the flags
	// override them.
	Options = operator.Options
	// Operator is a built, not yet started multicache (Start runs it).
	Operator = operator.Operator
	// Sibling is a controller that runs in the process and reads the cache.
	Sibling = operator.Sibling
	// SiblingDeps are what a sibling is built from: the manager, the cache, the options,
	// the metrics registry and a logger.
	SiblingDeps = operator.SiblingDeps
	// SiblingFactory builds a sibling; an error stops the start-up. It returns no sibling
	// and no error to stay off with these options (the store it reads disabled).
	SiblingFactory = operator.SiblingFactory
)

// New builds the operator against cfg with opts (from DefaultOptions or Command.Options),
// not started: run it with Start.
func New(cfg *rest.Config, opts Options) (*Operator, error) { return operator.New(cfg, opts) }

// PodKey returns a pod's namespace and name.
func PodKey(pod *corev1.Pod) types.NamespacedName { return stores.PodKey(pod) }

// IsTerminal reports whether a pod finished (Succeeded or Failed): it holds no resources.
func IsTerminal(pod *corev1.Pod) bool { return stores.IsTerminal(pod) }

// ControllerOwner returns the workload that controls a pod, as the owner feeds key it.
func ControllerOwner(pod *corev1.Pod) (OwnerKey, types.UID, bool) { return stores.ControllerOwner(pod) }

// CacheHandlerBuilder builds a CacheHandler: what a store's unit test needs to call its
// factory (the operator builds the real one from the flags).
type CacheHandlerBuilder = stores.CacheHandlerBuilder

// NewCacheHandlerBuilder starts a CacheHandler with the built-in stores enabled and the
// defaults documented on each setter.
func NewCacheHandlerBuilder() *CacheHandlerBuilder { return stores.NewCacheHandlerBuilder() }

// DefaultOptions returns the options used when no flag is given (the built-in stores).
func DefaultOptions() Options { return operator.DefaultOptions() }

// IsPlaceholder reports whether a pod is the synthetic placeholder of a Reservation: a
// store that handles pods receives them too (through PodOp) and must decide whether they
// count (the NodeStore charges them; a store that counts workloads' pods skips them).
func IsPlaceholder(pod *corev1.Pod) bool {
	_, ok := stores.PlaceholderOf(pod)
	return ok
}
