package stores

import (
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// CacheHandler is the configuration every store receives and the callbacks through which
// stores read each other (node infos, pod states). What a store asks of the others or of
// the status writers goes out through its Outbox, never through here.
// It is built once, from flags, with a CacheHandlerBuilder; only the callbacks are wired
// after that, by the handler, before any event arrives.
//
// Where Gödel's CacheHandler hands out client-go listers, this one hands out a
// controller-runtime client.Reader backed by the manager's informer cache (PodReader):
// same data, same cost, one informer per kind for the whole process.
//
// It implements store.Handle; a store registered out of tree gets it wrapped
// (PublicHandle), without the rest: the lock, the Set* wiring and the reservation
// settings are for the handler and the built-in stores.
type CacheHandler struct {
	componentName  string
	schedulerType  string
	subClusterKey  string
	subCluster     string
	enabled        map[Name]bool
	podAssumedTTL  time.Duration
	period         time.Duration
	reservationTTL time.Duration
	// reservationDefaultTTL is the lifetime of a Reservation without ttlSeconds.
	reservationDefaultTTL time.Duration
	stopCh                <-chan struct{}
	mu                    *sync.RWMutex
	podReader             client.Reader
	clock                 clock.WithTicker
	generations           *store.Generations
	// podGroupSources are the enabled PodGroup sources; nil enables every one.
	podGroupSources map[store.PodGroupSource]bool
	// accounting are the feature gates of kube-scheduler's charge the flags mirror.
	accounting store.Accounting

	getNodeInfo func(name string) (*store.NodeInfo, bool)
	getPodState func(key types.NamespacedName) (store.PodStatus, bool)

	extendedResourceClass    func(name corev1.ResourceName) (string, bool)
	extendedResourcesChanged func(names []corev1.ResourceName)
}

var _ store.Handle = (*CacheHandler)(nil)

// ComponentName names this component (in Movement status and logs).
func (h *CacheHandler) ComponentName() string { return h.componentName }

// SchedulerType is the scheduler this cache serves (its schedulerName).
func (h *CacheHandler) SchedulerType() string { return h.schedulerType }

// SubClusterKey is the node label that splits the cluster into sub-clusters ("" for none).
func (h *CacheHandler) SubClusterKey() string { return h.subClusterKey }

// SubCluster is the value of SubClusterKey this replica serves ("" for the whole cluster).
func (h *CacheHandler) SubCluster() string { return h.subCluster }

// IsStoreEnabled reports whether a store is built. Required stores are always enabled.
func (h *CacheHandler) IsStoreEnabled(name Name) bool { return Required(name) || h.enabled[name] }

// PodAssumedTTL is how long an assumed pod lives after FinishBinding without the API
// confirming it.
func (h *CacheHandler) PodAssumedTTL() time.Duration { return h.podAssumedTTL }

// Period is how often assumed pods are checked for expiry.
func (h *CacheHandler) Period() time.Duration { return h.period }

// ReservationTTL is the seed's ReservationTTL: how long a deleted pod annotated
// reserve-on-delete keeps its place on its node (a placeholder, then the Reservation the
// leader creates for its replacement) with no replacement consuming it.
func (h *CacheHandler) ReservationTTL() time.Duration { return h.reservationTTL }

// ReservationDefaultTTL is how long a reservation without ttlSeconds stays Reserved
// unmatched.
func (h *CacheHandler) ReservationDefaultTTL() time.Duration { return h.reservationDefaultTTL }

// StopCh is closed when the operator stops (its manager's context ends).
func (h *CacheHandler) StopCh() <-chan struct{} { return h.stopCh }

// Mutex is the handler lock: every event holds it for writing, every read for reading.
func (h *CacheHandler) Mutex() *sync.RWMutex { return h.mu }

// PodReader reads pods from the manager's informer cache (nil when not configured).
func (h *CacheHandler) PodReader() client.Reader { return h.podReader }

// Clock is the time source of TTLs and deadlines (a fake one in tests).
func (h *CacheHandler) Clock() clock.WithTicker { return h.clock }

// Generations hands out the generation numbers that incremental snapshots rely on.
func (h *CacheHandler) Generations() *store.Generations { return h.generations }

// Accounting is how pods are charged to nodes (the feature gates the flags mirror): what
// the NodeStore charges and checks is Accounting().PodRequests.
func (h *CacheHandler) Accounting() store.Accounting { return h.accounting }

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

// CacheHandlerBuilder builds a CacheHandler. The zero value is not usable: start with
// NewCacheHandlerBuilder, whose defaults are documented on each setter.
type CacheHandlerBuilder struct {
	h      CacheHandler
	stores []Name
	known  []Name
	// defaultTTLSet: ReservationDefaultTTL was set, so ReservationTTL no longer sets it.
	defaultTTLSet bool
}

// NewCacheHandlerBuilder starts a CacheHandler with every store enabled and the defaults:
// component "multicache", scheduler "default-scheduler", PodAssumedTTL 15m,
// Period 1s, ReservationTTL and ReservationDefaultTTL 10m, the real clock.
func NewCacheHandlerBuilder() *CacheHandlerBuilder {
	return &CacheHandlerBuilder{
		h: CacheHandler{
			componentName:         "multicache",
			schedulerType:         "default-scheduler",
			podAssumedTTL:         15 * time.Minute,
			period:                time.Second,
			reservationTTL:        10 * time.Minute,
			reservationDefaultTTL: 10 * time.Minute,
			clock:                 clock.RealClock{},
		},
		stores: append([]Name(nil), FanOutOrder...),
		known:  FanOutOrder,
	}
}

// ComponentName sets ComponentName.
func (b *CacheHandlerBuilder) ComponentName(name string) *CacheHandlerBuilder {
	b.h.componentName = name
	return b
}

// SchedulerType sets SchedulerType.
func (b *CacheHandlerBuilder) SchedulerType(name string) *CacheHandlerBuilder {
	b.h.schedulerType = name
	return b
}

// SubCluster restricts the cache to the nodes labelled key=value.
func (b *CacheHandlerBuilder) SubCluster(key, value string) *CacheHandlerBuilder {
	b.h.subClusterKey, b.h.subCluster = key, value
	return b
}

// EnabledStores sets which stores are built (required ones are added).
func (b *CacheHandlerBuilder) EnabledStores(names ...Name) *CacheHandlerBuilder {
	b.stores = names
	return b
}

// KnownStores sets the names EnabledStores may use (default FanOutOrder, the built-in
// stores): the handler's registry, when stores are registered beyond the built-in ones.
func (b *CacheHandlerBuilder) KnownStores(names ...Name) *CacheHandlerBuilder {
	b.known = names
	return b
}

// PodAssumedTTL sets PodAssumedTTL.
func (b *CacheHandlerBuilder) PodAssumedTTL(d time.Duration) *CacheHandlerBuilder {
	b.h.podAssumedTTL = d
	return b
}

// Period sets Period.
func (b *CacheHandlerBuilder) Period(d time.Duration) *CacheHandlerBuilder {
	b.h.period = d
	return b
}

// ReservationTTL sets ReservationTTL and, unless ReservationDefaultTTL is set (before or
// after), ReservationDefaultTTL too: the one setting both had before they were two.
func (b *CacheHandlerBuilder) ReservationTTL(d time.Duration) *CacheHandlerBuilder {
	b.h.reservationTTL = d
	if !b.defaultTTLSet {
		b.h.reservationDefaultTTL = d
	}
	return b
}

// ReservationDefaultTTL sets ReservationDefaultTTL.
func (b *CacheHandlerBuilder) ReservationDefaultTTL(d time.Duration) *CacheHandlerBuilder {
	b.h.reservationDefaultTTL, b.defaultTTLSet = d, true
	return b
}

// Accounting sets Accounting (default: kube-scheduler v1.37.1's default feature gates).
func (b *CacheHandlerBuilder) Accounting(a store.Accounting) *CacheHandlerBuilder {
	b.h.accounting = a
	return b
}

// StopCh sets StopCh.
func (b *CacheHandlerBuilder) StopCh(ch <-chan struct{}) *CacheHandlerBuilder {
	b.h.stopCh = ch
	return b
}

// PodReader sets PodReader.
func (b *CacheHandlerBuilder) PodReader(pods client.Reader) *CacheHandlerBuilder {
	b.h.podReader = pods
	return b
}

// Clock sets the time source.
func (b *CacheHandlerBuilder) Clock(c clock.WithTicker) *CacheHandlerBuilder {
	b.h.clock = c
	return b
}

// Build validates the configuration and returns the CacheHandler. An unknown store name or a
// non-positive duration is an error naming it.
func (b *CacheHandlerBuilder) Build() (*CacheHandler, error) {
	h := b.h
	var errs []error
	known := map[Name]bool{}
	for _, n := range b.known {
		known[n] = true
	}
	h.enabled = map[Name]bool{}
	for _, n := range b.stores {
		if !known[n] {
			errs = append(errs, fmt.Errorf("unknown store %q (known: %v)", n, b.known))
			continue
		}
		h.enabled[n] = true
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"pod assumed TTL", h.podAssumedTTL}, {"period", h.period}, {"reservation TTL", h.reservationTTL}, {"reservation default TTL", h.reservationDefaultTTL}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", d.name, d.v))
		}
	}
	if (h.subClusterKey == "") != (h.subCluster == "") {
		errs = append(errs, errors.New("a sub-cluster needs both a label key and a value"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if h.stopCh == nil {
		h.stopCh = make(chan struct{})
	}
	h.mu = &sync.RWMutex{}
	h.generations = &store.Generations{}
	return &h, nil
}
