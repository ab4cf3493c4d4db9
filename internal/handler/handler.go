// Package handler is the heart of multicache: the ClusterEventsHandler that takes every
// event under one lock, validates it, and fans it out to the enabled stores in a fixed order
// (PodStore last); the assumed-pod state machine and the synthetic pod events (podOp);
// snapshots; the expiry of assumed pods and the reservation reaper; the read API for sibling controllers; the debug dump.
//
// A rejected event changes no store: every event is validated in full (against the
// last-seen objects and the pod state machine) before the first store sees it, and stores
// cannot fail. Errors are typed (see stores.Err*), counted and logged; nothing panics or
// exits.
package handler

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ClusterEventsHandler is the one door into the cache, in two forms that meet in one
// validation and fan-out per kind (objectEventLocked, and the pod state machine for pods):
//
//   - the level form, Sync(key, current object or a typed nil, delivery), which the
//     operator's feeds call: the handler derives the edge from the last-seen object;
//   - the edge form, Add, Update(old, new) and Delete(last seen), for a caller that knows
//     the exact edge: the seed's informer handlers, tests and in-process embedders.
//
// Both take an object of any kind the handler keeps, and refuse another with
// ErrInvalidObject. Sibling schedulers call AssumePod, FinishBinding and ForgetPod. Every
// method is safe for concurrent use.
type ClusterEventsHandler interface {
	// Sync brings the stores to the object of any kind under key as a feed came by it:
	// the feeds' one entry (sync.go, delivery.go).
	Sync(key types.NamespacedName, obj any, inScope bool, d Delivery) error
	// Add, Update and Delete apply one edge (events.go).
	Add(obj any) error
	Update(oldObj, newObj any) error
	Delete(obj any) error

	// AssumePod charges a pod to the node in its spec.nodeName before the API binds it.
	AssumePod(pod *corev1.Pod) error
	// FinishBinding starts the expiry clock of an assumed pod (PodAssumedTTL).
	FinishBinding(pod *corev1.Pod) error
	// ForgetPod undoes AssumePod (the binding failed).
	ForgetPod(pod *corev1.Pod) error
	// IsAssumedPod reports whether a pod is assumed and not yet confirmed by the API.
	IsAssumedPod(pod *corev1.Pod) (bool, error)
	// GetPod returns the cached copy of a pod.
	GetPod(pod *corev1.Pod) (*corev1.Pod, error)

	// UpdateSnapshot brings a snapshot up to date, copying only what changed since.
	UpdateSnapshot(snap *Snapshot) error
}

// Handler implements ClusterEventsHandler and the read queries (reader.go).
type Handler struct {
	config *stores.CacheHandler
	mu     *sync.RWMutex
	log    logr.Logger

	// stores are the enabled stores in fan-out order; byName finds one (the optional
	// built-in stores are reached through it by their type, see lookup).
	stores []store.Store
	byName map[stores.Name]store.Store
	// The required stores, always enabled.
	nodes *nodestore.Store
	pods  *podstore.Store
	// afterPart, when set (tests), runs between two parts of a read in parts (parts.go),
	// the lock released: events applied between two parts.
	afterPart func()

	// podSubs are the stores other than the PodStore that handle pods.
	podSubs      []subscriber[*corev1.Pod]
	nodeKind     *objectKind[string, *corev1.Node]
	nmNodeKind   *objectKind[string, *v1alpha1.NMNode]
	cnrKind      *objectKind[string, *v1alpha1.CustomNodeResource]
	podGroupKind *objectKind[types.NamespacedName, *v1alpha1.PodGroup]
	pdbKind      *objectKind[types.NamespacedName, *policyv1.PodDisruptionBudget]
	ownerKind    *objectKind[store.OwnerKey, *store.Owner]
	movementKind *objectKind[string, *v1alpha1.Movement]
	rsvKind      *objectKind[types.NamespacedName, *v1alpha1.Reservation]
	// The DRA kinds (devices.go).
	sliceKind *objectKind[string, *resourcev1.ResourceSlice]
	claimKind *objectKind[types.NamespacedName, *resourcev1.ResourceClaim]
	classKind *objectKind[string, *resourcev1.DeviceClass]
	// kinds are the kinds above in one table (kinds.go), in the order WatchedKinds lists
	// them; kindsByType finds one by its Go type.
	kinds       []kind
	kindsByType map[reflect.Type]kind
	// claims are the claims' allocations schedulers assumed (claims.go).
	claims claimAssumptions

	// events counts events for sampling store timings.
	events uint64
	// rejections remembers which (kind, op, reason) were logged, to log each once.
	rejections map[rejectionKey]bool
	// statusChanged is where changed objects go (SetStatusNotifier); nil drops them.
	statusChanged func(kind stores.Kind, key types.NamespacedName)
}

var _ ClusterEventsHandler = (*Handler)(nil)

// New builds the enabled built-in stores (BuiltIn); see NewFromRegistry.
func New(config *stores.CacheHandler, log logr.Logger) *Handler {
	h, err := NewFromRegistry(config, BuiltIn(), log)
	if err != nil {
		// Unreachable: the built-in factories cannot fail (TestRegistry_BuiltInBuilds).
		log.Error(err, "building the built-in stores")
	}
	return h
}

// NewFromRegistry builds the enabled stores of reg, in its order, subscribes each to the
// kinds whose event interfaces it implements and wires the CacheHandler callbacks
// (GetNodeInfo, GetPodState); a store that asks for synthetic pod events gets them applied
// after every call into it (outboxAfter). reg must hold the required stores (nodes, pods) as
// BuiltIn registers them; a factory's error, a store whose Name differs from its
// registration or a missing required store is an error naming the store.
func NewFromRegistry(config *stores.CacheHandler, reg Registry, log logr.Logger) (*Handler, error) {
	h := &Handler{
		config:       config,
		mu:           config.Mutex(),
		log:          log,
		byName:       map[stores.Name]store.Store{},
		nodeKind:     clusterScoped[*corev1.Node](stores.KindNode),
		nmNodeKind:   clusterScoped[*v1alpha1.NMNode](stores.KindNMNode),
		cnrKind:      clusterScoped[*v1alpha1.CustomNodeResource](stores.KindCNR),
		podGroupKind: namespaced[*v1alpha1.PodGroup](stores.KindPodGroup),
		pdbKind:      namespaced[*policyv1.PodDisruptionBudget](stores.KindPDB),
		ownerKind:    owners(),
		movementKind: clusterScoped[*v1alpha1.Movement](stores.KindMovement),
		rsvKind:      namespaced[*v1alpha1.Reservation](stores.KindReservation),
		sliceKind:    clusterScoped[*resourcev1.ResourceSlice](stores.KindResourceSlice),
		claimKind:    namespaced[*resourcev1.ResourceClaim](stores.KindResourceClaim),
		classKind:    clusterScoped[*resourcev1.DeviceClass](stores.KindDeviceClass),
		rejections:   map[rejectionKey]bool{},
	}
	h.kinds = []kind{h.nodeKind, h.nmNodeKind, h.cnrKind, h.podGroupKind, h.pdbKind, h.ownerKind,
		h.movementKind, h.rsvKind, h.sliceKind, h.claimKind, h.classKind}
	h.kindsByType = make(map[reflect.Type]kind, len(h.kinds))
	for _, k := range h.kinds {
		h.kindsByType[k.objectType()] = k
	}
	h.claims.assumed = map[types.NamespacedName]assumedClaim{}
	h.claimKind.dispatch = h.dispatchClaim
	for _, r := range reg {
		if !config.IsStoreEnabled(r.Name) {
			continue
		}
		s, err := r.New(config)
		switch {
		case err != nil:
			return h, fmt.Errorf("building store %q: %w", r.Name, err)
		case s == nil:
			return h, fmt.Errorf("building store %q: the factory returned no store", r.Name)
		case s.Name() != r.Name:
			return h, fmt.Errorf("store registered as %q calls itself %q: Name() must return its registered name", r.Name, s.Name())
		}
		h.stores = append(h.stores, s)
		h.byName[r.Name] = s
		h.subscribe(s)
	}
	var ok bool
	if h.nodes, ok = h.byName[stores.NodeStoreName].(*nodestore.Store); !ok {
		return h, fmt.Errorf("the registry must hold the built-in %q store (required)", stores.NodeStoreName)
	}
	if h.pods, ok = h.byName[stores.PodStoreName].(*podstore.Store); !ok {
		return h, fmt.Errorf("the registry must hold the built-in %q store (required)", stores.PodStoreName)
	}
	if last := h.stores[len(h.stores)-1]; last != store.Store(h.pods) {
		return h, fmt.Errorf("the %q store must come last in the registry, found %q", stores.PodStoreName, last.Name())
	}
	return h, nil
}

// subscribe adds a store to every kind whose event interface it implements.
func (h *Handler) subscribe(s store.Store) {
	name, after := s.Name(), h.outboxAfter(s)
	if st, ok := s.(store.PodHandler); ok {
		sub := newSubscriber(name, after, st.AddPod, st.UpdatePod, st.DeletePod)
		if a, ok := s.(store.PodAssumer); ok {
			sub.assume = then2(a.AssumePod, after)
		}
		h.podSubs = append(h.podSubs, sub)
	}
	if st, ok := s.(store.NodeHandler); ok {
		h.nodeKind.subs = append(h.nodeKind.subs, newSubscriber(name, after, st.AddNode, st.UpdateNode, st.DeleteNode))
	}
	if st, ok := s.(store.NMNodeHandler); ok {
		h.nmNodeKind.subs = append(h.nmNodeKind.subs, newSubscriber(name, after, st.AddNMNode, st.UpdateNMNode, st.DeleteNMNode))
	}
	if st, ok := s.(store.CNRHandler); ok {
		h.cnrKind.subs = append(h.cnrKind.subs, newSubscriber(name, after, st.AddCNR, st.UpdateCNR, st.DeleteCNR))
	}
	if st, ok := s.(store.PodGroupHandler); ok {
		h.podGroupKind.subs = append(h.podGroupKind.subs, newSubscriber(name, after, st.AddPodGroup, st.UpdatePodGroup, st.DeletePodGroup))
	}
	if st, ok := s.(store.PDBHandler); ok {
		h.pdbKind.subs = append(h.pdbKind.subs, newSubscriber(name, after, st.AddPDB, st.UpdatePDB, st.DeletePDB))
	}
	if st, ok := s.(store.OwnerHandler); ok {
		h.ownerKind.subs = append(h.ownerKind.subs, newSubscriber(name, after, st.AddOwner, st.UpdateOwner, st.DeleteOwner))
	}
	if st, ok := s.(store.MovementHandler); ok {
		h.movementKind.subs = append(h.movementKind.subs, newSubscriber(name, after, st.AddMovement, st.UpdateMovement, st.DeleteMovement))
	}
	if st, ok := s.(store.ReservationHandler); ok {
		h.rsvKind.subs = append(h.rsvKind.subs, newSubscriber(name, after, st.AddReservation, st.UpdateReservation, st.DeleteReservation))
	}
	h.subscribeDevices(s, after)
}

// lookup returns an enabled built-in store by name as its type T (Registry.With refuses a
// taken name, so a built-in name always holds the built-in store): how the typed queries of
// reader.go, the reaper and the gauges reach the optional stores. The zero T and false when
// the store is disabled.
func lookup[T store.Store](h *Handler, name stores.Name) (T, bool) {
	s, ok := h.byName[name].(T)
	return s, ok
}

// Config returns the CacheHandler the stores were built with.
func (h *Handler) Config() *stores.CacheHandler { return h.config }

// StoreNames returns the enabled stores in fan-out order.
func (h *Handler) StoreNames() []stores.Name {
	names := make([]stores.Name, len(h.stores))
	for i, s := range h.stores {
		names[i] = s.Name()
	}
	return names
}

// WatchedKinds returns the kinds some enabled store handles: the only kinds worth watching.
// Pods and Nodes are always watched.
func (h *Handler) WatchedKinds() []stores.Kind {
	kinds := []stores.Kind{stores.KindPod, stores.KindNode}
	for _, k := range h.kinds {
		if k.name() != stores.KindNode && k.watched() {
			kinds = append(kinds, k.name())
		}
	}
	return kinds
}

func keyOf[T client.Object](obj T) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
