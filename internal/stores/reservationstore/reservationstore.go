// Package reservationstore keeps Reservations: resources held on a node for the pods a
// reservation's selector matches.
//
// Phases: Pending (no node) -> Reserved (a placeholder pod charges the resources on the
// node, through CacheHandler.PodOp, skipping this store and the PodStore) -> Matched (a
// matching pod landed on the node: the placeholder is released, so nothing is counted
// twice) or Expired (the TTL ran out unmatched: the placeholder is released). If the pod
// that matched was only assumed and is forgotten, expires or goes, the reservation is
// Reserved again; once the API confirmed it, Matched is final. Reserved deadlines sit in a
// min-heap the reaper pops.
package reservationstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// entry is one reservation.
type entry struct {
	key      types.NamespacedName
	r        *v1alpha1.Reservation
	selector labels.Selector
	phase    v1alpha1.ReservationPhase
	// node is where the reservation is charged or matched ("" while Pending).
	node string
	// placeholder is the synthetic pod charged on the node while Reserved.
	placeholder *corev1.Pod
	// owner is the pod that matched the reservation.
	owner                 *v1alpha1.PodReference
	reservedAt, expiresAt time.Time
	// heapIndex is the position in the deadline heap, -1 when not in it.
	heapIndex int
}

// Store is the ReservationStore.
type Store struct {
	h    *stores.CacheHandler
	rsvs *stores.Versioned[types.NamespacedName, *entry]
	// byNode indexes Reserved and Matched reservations by node.
	byNode map[string]map[types.NamespacedName]*entry
	// byOwner indexes matched reservations by the pod that matched them.
	byOwner   map[types.NamespacedName]*entry
	deadlines deadlineHeap
}

var (
	_ stores.Store              = (*Store)(nil)
	_ stores.PodHandler         = (*Store)(nil)
	_ stores.ReservationHandler = (*Store)(nil)
)

// New returns an empty ReservationStore.
func New(h *stores.CacheHandler) *Store {
	return &Store{
		h:       h,
		rsvs:    stores.NewVersioned[types.NamespacedName, *entry](h.Generations()),
		byNode:  map[string]map[types.NamespacedName]*entry{},
		byOwner: map[types.NamespacedName]*entry{},
	}
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.ReservationStoreName }

// Len implements stores.Store.
func (s *Store) Len() int { return s.rsvs.Len() }

// selectorOf parses a reservation's pod selector; nil or malformed selects nothing.
func selectorOf(r *v1alpha1.Reservation) labels.Selector {
	if r.Spec.PodSelector == nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(r.Spec.PodSelector)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// AddReservation adds a reservation. Its status tells what happened before a restart: an
// Expired reservation stays expired, a Matched one stays matched by its current owner, and
// a Reserved one keeps its reservedAt (so its deadline does not move).
func (s *Store) AddReservation(r *v1alpha1.Reservation) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	e := &entry{key: key, r: r, selector: selectorOf(r), heapIndex: -1}
	s.rsvs.Set(key, e)
	if t := r.Status.ReservedAt; t != nil {
		e.reservedAt = t.Time
	}
	switch {
	case r.Status.Phase == v1alpha1.ReservationExpired:
		e.phase, e.node = v1alpha1.ReservationExpired, r.Spec.NodeName
		// The garbage collector counts its grace from the expiry, which must survive a restart.
		if t := r.Status.ExpiresAt; t != nil {
			e.expiresAt = t.Time
		} else if !e.reservedAt.IsZero() {
			e.expiresAt = e.reservedAt.Add(s.ttl(e))
		}
	case r.Status.Phase == v1alpha1.ReservationMatched && r.Status.CurrentOwner != nil && r.Spec.NodeName != "":
		e.phase, e.node = v1alpha1.ReservationMatched, r.Spec.NodeName
		owner := *r.Status.CurrentOwner
		e.owner = &owner
		if key := ownerKey(&owner); s.byOwner[key] == nil {
			s.byOwner[key] = e // a pod consumes one reservation: the first status naming it wins
		}
		s.indexNode(e)
	default:
		s.place(e)
	}
	s.changed(e)
}

// UpdateReservation applies a new spec. Status-only updates (the status writer's own) just
// replace the object. A Pending or Reserved reservation is placed again with the new spec
// (same reservedAt); Matched and Expired keep their outcome.
func (s *Store) UpdateReservation(oldR, newR *v1alpha1.Reservation) {
	e, ok := s.rsvs.Get(types.NamespacedName{Namespace: newR.Namespace, Name: newR.Name})
	if !ok {
		s.AddReservation(newR)
		return
	}
	e.r = newR
	if !equality.Semantic.DeepEqual(oldR.Spec, newR.Spec) {
		e.selector = selectorOf(newR)
		if e.phase == v1alpha1.ReservationPending || e.phase == v1alpha1.ReservationReserved {
			s.release(e)
			s.place(e)
		}
	}
	s.changed(e)
}

// DeleteReservation releases what a reservation holds and forgets it.
func (s *Store) DeleteReservation(r *v1alpha1.Reservation) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	e, ok := s.rsvs.Get(key)
	if !ok {
		return
	}
	s.release(e)
	s.unlinkOwner(e)
	s.rsvs.Delete(key)
}

// AddPod lets a pod that lands on a node consume a Reserved reservation there.
func (s *Store) AddPod(pod *corev1.Pod) {
	if s.ownedBy(pod) == nil {
		s.matchPod(pod)
	}
}

// UpdatePod follows the owner of a matched reservation, and lets a pod that just landed on
// a node consume a reservation there.
func (s *Store) UpdatePod(_, newPod *corev1.Pod) {
	key := stores.PodKey(newPod)
	if e := s.ownedBy(newPod); e != nil {
		if newPod.Spec.NodeName == e.node || s.confirmed(key) {
			s.changed(e) // the owner's object (or its confirmation) changed
			return
		}
		// An assumed owner moved away from the reservation's node.
		s.unmatch(e)
	}
	s.matchPod(newPod)
}

// DeletePod handles the owner of a matched reservation going: if it was only assumed
// (forgotten, expired, or deleted before the API confirmed it), the reservation is Reserved
// again; if the API had confirmed it, the reservation stays Matched (consumed).
func (s *Store) DeletePod(pod *corev1.Pod) {
	key := stores.PodKey(pod)
	e := s.ownedBy(pod)
	if e == nil {
		return
	}
	if s.confirmed(key) {
		s.unlinkOwner(e)
		s.changed(e)
		return
	}
	s.unmatch(e)
}

// ownedBy returns the reservation a pod consumed. A pod of the same name but another UID
// (recreated) consumed nothing.
func (s *Store) ownedBy(pod *corev1.Pod) *entry {
	e := s.byOwner[stores.PodKey(pod)]
	if e == nil || (e.owner.UID != "" && pod.UID != "" && e.owner.UID != pod.UID) {
		return nil
	}
	return e
}

// unlinkOwner removes the owner index entry of e, if it is e's. The owner itself stays
// recorded (it is the reservation's status).
func (s *Store) unlinkOwner(e *entry) {
	if e.owner == nil {
		return
	}
	if key := ownerKey(e.owner); s.byOwner[key] == e {
		delete(s.byOwner, key)
	}
}

// confirmed reports whether the API confirmed a pod. During a pod event the PodStore still
// holds the state from before the event (it is updated last).
func (s *Store) confirmed(key types.NamespacedName) bool {
	st, ok := s.h.GetPodState(key)
	return ok && st.State == stores.PodAdded
}

// ttl returns how long a reservation may stay Reserved unmatched.
func (s *Store) ttl(e *entry) time.Duration {
	if t := e.r.Spec.TTLSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	return s.h.ReservationTTL()
}

// changed records a change for snapshots and tells the status writer.
func (s *Store) changed(e *entry) {
	s.rsvs.Touch(e.key)
	s.h.ObjectChanged(stores.KindReservation, e.key)
}

func ownerKey(ref *v1alpha1.PodReference) types.NamespacedName {
	return types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
}
