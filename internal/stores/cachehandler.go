package stores

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Config configures a CacheHandler. A zero field takes the default its comment names.
type Config struct {
	// ComponentName names this component in Movement status and logs ("": "multicache").
	ComponentName string
	// SchedulerType is the scheduler this cache serves, its schedulerName
	// ("": "default-scheduler").
	SchedulerType string
	// SubClusterKey is the node label that splits the cluster into sub-clusters ("": none).
	// With it, the cache holds only the nodes labelled SubClusterKey=SubCluster.
	SubClusterKey string
	// SubCluster is the value of SubClusterKey this replica serves: set both or neither.
	SubCluster string
	// EnabledStores are the stores built (nil: every built-in store, FanOutOrder; empty:
	// none but the required ones, which are always built).
	EnabledStores []Name
	// KnownStores are the names EnabledStores may use (nil: FanOutOrder): the handler's
	// registry, when stores are registered beyond the built-in ones.
	KnownStores []Name
	// PodAssumedTTL is how long an assumed pod lives after FinishBinding without the API
	// confirming it (0: 15m).
	PodAssumedTTL time.Duration
	// Period is how often assumed pods are checked for expiry (0: 1s).
	Period time.Duration
	// ReservationTTL is the seed's ReservationTTL: how long a deleted pod annotated
	// reserve-on-delete keeps its place on its node (a placeholder, then the Reservation the
	// leader creates for its replacement) with no replacement consuming it (0: 10m).
	ReservationTTL time.Duration
	// ReservationDefaultTTL is how long a reservation without ttlSeconds stays Reserved
	// unmatched (0: ReservationTTL, the one setting both had before they were two).
	ReservationDefaultTTL time.Duration
	// Accounting is how pods are charged to nodes, the feature gates the flags mirror (zero:
	// kube-scheduler's default gates). The NodeStore charges Accounting.PodRequests.
	Accounting store.Accounting
	// StopCh is closed when the operator stops, its manager's context ending (nil: never).
	StopCh <-chan struct{}
	// PodReader reads pods from the manager's informer cache (nil: none).
	PodReader client.Reader
	// Clock is the time source of TTLs and deadlines (nil: the real clock; tests use a fake).
	Clock clock.WithTicker
	// PodGroupSources are the PodGroup sources the PodGroupStore follows (nil: every one;
	// empty: none). A pod is counted only into the groups of enabled sources.
	PodGroupSources []store.PodGroupSource
}

// CacheHandler is the configuration every store receives and the callbacks through which
// stores read each other (node infos, pod states). What a store asks of the others or of
// the status writers goes out through its Outbox, never through here.
// NewCacheHandler builds it once, from flags; only the callbacks are wired after that, by
// the handler, before any event arrives.
//
// Where Gödel's CacheHandler hands out client-go listers, this one hands out a
// controller-runtime client.Reader backed by the manager's informer cache (PodReader):
// same data, same cost, one informer per kind for the whole process.
//
// It implements store.Handle; a store registered out of tree gets it wrapped
// (PublicHandle), without the rest: the lock, the Set* wiring and the reservation
// settings are for the handler and the built-in stores.
type CacheHandler struct {
	cfg         Config // every default filled in
	mu          sync.RWMutex
	generations store.Generations

	getNodeInfo func(name string) (*store.NodeInfo, bool)
	getPodState func(key types.NamespacedName) (store.PodStatus, bool)

	extendedResourceClass    func(name corev1.ResourceName) (string, bool)
	extendedResourcesChanged func(names []corev1.ResourceName)
}

var _ store.Handle = (*CacheHandler)(nil)

// NewCacheHandler fills c's zero fields with their defaults and returns its CacheHandler.
// A negative duration, an unknown store name or half a sub-cluster is an error naming it;
// every one found is reported.
func NewCacheHandler(c Config) (*CacheHandler, error) {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"pod assumed TTL", c.PodAssumedTTL}, {"period", c.Period}, {"reservation TTL", c.ReservationTTL}, {"reservation default TTL", c.ReservationDefaultTTL}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (0 takes the default), got %v", d.name, d.v))
		}
	}
	if (c.SubClusterKey == "") != (c.SubCluster == "") {
		errs = append(errs, errors.New("a sub-cluster needs both a label key and a value"))
	}
	if c.EnabledStores == nil {
		c.EnabledStores = FanOutOrder
	}
	if c.KnownStores == nil {
		c.KnownStores = FanOutOrder
	}
	for _, n := range c.EnabledStores {
		if !slices.Contains(c.KnownStores, n) {
			errs = append(errs, fmt.Errorf("unknown store %q (known: %v)", n, c.KnownStores))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c.ComponentName = cmp.Or(c.ComponentName, "multicache")
	c.SchedulerType = cmp.Or(c.SchedulerType, "default-scheduler")
	c.PodAssumedTTL = cmp.Or(c.PodAssumedTTL, 15*time.Minute)
	c.Period = cmp.Or(c.Period, time.Second)
	c.ReservationTTL = cmp.Or(c.ReservationTTL, 10*time.Minute)
	c.ReservationDefaultTTL = cmp.Or(c.ReservationDefaultTTL, c.ReservationTTL)
	if c.StopCh == nil {
		c.StopCh = make(chan struct{})
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	c.EnabledStores, c.PodGroupSources = slices.Clone(c.EnabledStores), slices.Clone(c.PodGroupSources)
	return &CacheHandler{cfg: c}, nil
}

// ComponentName is Config.ComponentName.
func (h *CacheHandler) ComponentName() string { return h.cfg.ComponentName }

// SchedulerType is Config.SchedulerType.
func (h *CacheHandler) SchedulerType() string { return h.cfg.SchedulerType }

// SubClusterKey is Config.SubClusterKey.
func (h *CacheHandler) SubClusterKey() string { return h.cfg.SubClusterKey }

// SubCluster is Config.SubCluster.
func (h *CacheHandler) SubCluster() string { return h.cfg.SubCluster }

// IsStoreEnabled reports whether a store is built. Required stores are always enabled.
func (h *CacheHandler) IsStoreEnabled(name Name) bool {
	return Required(name) || slices.Contains(h.cfg.EnabledStores, name)
}

// IsPodGroupSourceEnabled reports whether the PodGroupStore follows a source.
func (h *CacheHandler) IsPodGroupSourceEnabled(s store.PodGroupSource) bool {
	return h.cfg.PodGroupSources == nil || slices.Contains(h.cfg.PodGroupSources, s)
}

// PodAssumedTTL is Config.PodAssumedTTL.
func (h *CacheHandler) PodAssumedTTL() time.Duration { return h.cfg.PodAssumedTTL }

// Period is Config.Period.
func (h *CacheHandler) Period() time.Duration { return h.cfg.Period }

// ReservationTTL is Config.ReservationTTL.
func (h *CacheHandler) ReservationTTL() time.Duration { return h.cfg.ReservationTTL }

// ReservationDefaultTTL is Config.ReservationDefaultTTL.
func (h *CacheHandler) ReservationDefaultTTL() time.Duration { return h.cfg.ReservationDefaultTTL }

// StopCh is Config.StopCh.
func (h *CacheHandler) StopCh() <-chan struct{} { return h.cfg.StopCh }

// Mutex is the handler lock: every event holds it for writing, every read for reading.
func (h *CacheHandler) Mutex() *sync.RWMutex { return &h.mu }

// PodReader is Config.PodReader.
func (h *CacheHandler) PodReader() client.Reader { return h.cfg.PodReader }

// Clock is Config.Clock.
func (h *CacheHandler) Clock() clock.WithTicker { return h.cfg.Clock }

// Generations hands out the generation numbers that incremental snapshots rely on.
func (h *CacheHandler) Generations() *store.Generations { return &h.generations }

// Accounting is Config.Accounting.
func (h *CacheHandler) Accounting() store.Accounting { return h.cfg.Accounting }

// GetNodeInfo returns the NodeStore's live NodeInfo of a node. Callers hold the handler
// lock and must not modify it.
func (h *CacheHandler) GetNodeInfo(name string) (*store.NodeInfo, bool) {
	if h.getNodeInfo == nil {
		return nil, false
	}
	return h.getNodeInfo(name)
}

// SetNodeHandler wires GetNodeInfo to the NodeStore.
func (h *CacheHandler) SetNodeHandler(fn func(name string) (*store.NodeInfo, bool)) {
	h.getNodeInfo = fn
}

// GetPodState returns the PodStore's state of a pod. During a pod event it is still the
// state before the event: the PodStore is updated last.
func (h *CacheHandler) GetPodState(key types.NamespacedName) (store.PodStatus, bool) {
	if h.getPodState == nil {
		return store.PodStatus{}, false
	}
	return h.getPodState(key)
}

// SetPodHandler wires GetPodState to the PodStore.
func (h *CacheHandler) SetPodHandler(fn func(key types.NamespacedName) (store.PodStatus, bool)) {
	h.getPodState = fn
}

// ExtendedResourceClass returns the DeviceClass serving an extended resource through DRA
// (DRAExtendedResource): the DeviceStore's map, kube-scheduler's own. False when no class
// serves it or the DeviceStore is off. Callers hold the handler lock.
func (h *CacheHandler) ExtendedResourceClass(name corev1.ResourceName) (string, bool) {
	if h.extendedResourceClass == nil {
		return "", false
	}
	return h.extendedResourceClass(name)
}

// SetExtendedResourceResolver wires ExtendedResourceClass to the DeviceStore.
func (h *CacheHandler) SetExtendedResourceResolver(fn func(name corev1.ResourceName) (string, bool)) {
	h.extendedResourceClass = fn
}

// ExtendedResourcesChanged tells the NodeStore that ExtendedResourceClass may answer
// otherwise than before for these resources (a DeviceClass came, went or changed), so that
// it charges again the nodes' requests for them. Called under the handler lock, during the
// DeviceClass event.
func (h *CacheHandler) ExtendedResourcesChanged(names ...corev1.ResourceName) {
	if h.extendedResourcesChanged != nil {
		h.extendedResourcesChanged(names)
	}
}

// SetExtendedResourcesChangedFunc wires ExtendedResourcesChanged to the NodeStore.
func (h *CacheHandler) SetExtendedResourcesChangedFunc(fn func(names []corev1.ResourceName)) {
	h.extendedResourcesChanged = fn
}
