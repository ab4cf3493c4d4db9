package reservationstore

import (
	"container/heap"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// skipped are the stores a placeholder never reaches: this one (it is its own placeholder)
// and the PodStore (a placeholder is not a pod of the API).
var skipped = []stores.Name{stores.ReservationStoreName, stores.PodStoreName}

// place puts a reservation that holds nothing where it belongs: Pending without a node;
// Matched when a pod already on its node may consume it; Reserved otherwise.
func (s *Store) place(e *entry) {
	node := e.r.Spec.NodeName
	if node == "" {
		e.phase, e.node = v1alpha1.ReservationPending, ""
		return
	}
	e.node = node
	s.indexNode(e)
	if e.reservedAt.IsZero() {
		// Whole seconds, as the status stores it: after a restart the deadline recovered
		// from status.reservedAt is the same one.
		e.reservedAt = s.h.Clock().Now().Truncate(time.Second)
	}
	e.expiresAt = e.reservedAt.Add(s.ttl(e))
	if pod := s.podOnNodeFor(e); pod != nil {
		s.match(e, pod)
		return
	}
	s.reserve(e)
}

// reserve charges the placeholder on the reservation's node (where it was placed, even if
// a later spec names another one) and arms the deadline.
func (s *Store) reserve(e *entry) {
	e.phase = v1alpha1.ReservationReserved
	e.placeholder = stores.NewPlaceholderPod(e.r, e.node)
	s.h.PodOp(e.placeholder, true, skipped...)
	heap.Push(&s.deadlines, e)
}

// match hands a Reserved (or just placed) reservation to pod: the placeholder goes.
func (s *Store) match(e *entry, pod *corev1.Pod) {
	s.dropPlaceholder(e)
	e.phase = v1alpha1.ReservationMatched
	e.owner = &v1alpha1.PodReference{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	s.byOwner[stores.PodKey(pod)] = e
}

// unmatch takes a reservation back from an owner that left before the API confirmed it: it
// is Reserved again (same deadline), unless another pod on the node may consume it.
func (s *Store) unmatch(e *entry) {
	s.unlinkOwner(e)
	e.owner = nil
	if pod := s.podOnNodeFor(e); pod != nil {
		s.match(e, pod)
	} else {
		s.reserve(e)
	}
	s.changed(e)
}

// release undoes place: no placeholder, no deadline, out of the node index.
func (s *Store) release(e *entry) {
	s.dropPlaceholder(e)
	s.unindexNode(e)
}

func (s *Store) dropPlaceholder(e *entry) {
	if e.placeholder != nil {
		s.h.PodOp(e.placeholder, false, skipped...)
		e.placeholder = nil
	}
	if e.heapIndex >= 0 {
		heap.Remove(&s.deadlines, e.heapIndex)
	}
}

// matchPod lets a pod consume the best Reserved reservation on its node, if any.
func (s *Store) matchPod(pod *corev1.Pod) {
	if !eligible(pod) {
		return
	}
	var candidates []*entry
	for _, e := range s.byNode[pod.Spec.NodeName] {
		if e.phase == v1alpha1.ReservationReserved && e.accepts(pod, false) {
			candidates = append(candidates, e)
		}
	}
	if len(candidates) == 0 {
		return
	}
	sort.Slice(candidates, func(i, j int) bool { return preferred(candidates[i], candidates[j], pod) })
	s.match(candidates[0], pod)
	s.changed(candidates[0])
}

// podOnNodeFor finds a pod already on a reservation's node that may consume it: preferably
// the owner its status names, else the first by namespace/name. Only pods known to have
// landed after the reservation was created qualify, so that which pod consumes it does not
// depend on the order a relist delivers objects in.
func (s *Store) podOnNodeFor(e *entry) *corev1.Pod {
	info, ok := s.h.GetNodeInfo(e.node)
	if !ok {
		return nil
	}
	var best *corev1.Pod
	for _, pod := range info.Pods {
		if s.ownedBy(pod) != nil || !eligible(pod) || !e.accepts(pod, true) {
			continue
		}
		if named(e, pod) {
			return pod
		}
		if best == nil || pod.Namespace+"/"+pod.Name < best.Namespace+"/"+best.Name {
			best = pod
		}
	}
	return best
}

// eligible reports whether a pod can consume a reservation at all: on a node, running or
// about to, charged to the guaranteed pool (a reservation holds guaranteed resources).
func eligible(pod *corev1.Pod) bool {
	_, isPlaceholder := stores.PlaceholderOf(pod)
	return pod.Spec.NodeName != "" && !stores.IsTerminal(pod) && !stores.IsBestEffort(pod) && !isPlaceholder
}

// accepts reports whether a pod may consume this reservation: same namespace, selected, and
// not landed before the reservation was created. With requireKnownLanding, a pod whose
// landing time is unknown is taken to predate the reservation.
func (e *entry) accepts(pod *corev1.Pod, requireKnownLanding bool) bool {
	if pod.Namespace != e.key.Namespace || !e.selector.Matches(labels.Set(pod.Labels)) {
		return false
	}
	landed := landedAt(pod)
	if landed.IsZero() {
		return !requireKnownLanding
	}
	return !landed.Before(e.r.CreationTimestamp.Time)
}

// landedAt is when a pod was placed on its node: its PodScheduled condition's transition,
// else its creation; zero when unknown.
func landedAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// named reports whether a reservation's status names pod as its owner (a restart recovers
// the match it had).
func named(e *entry, pod *corev1.Pod) bool {
	o := e.r.Status.CurrentOwner
	return o != nil && o.Namespace == pod.Namespace && o.Name == pod.Name
}

// preferred orders the reservations a pod may consume: the one whose status names it, then
// the oldest, then by name.
func preferred(a, b *entry, pod *corev1.Pod) bool {
	if na, nb := named(a, pod), named(b, pod); na != nb {
		return na
	}
	ta, tb := a.r.CreationTimestamp.Time, b.r.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.key.String() < b.key.String()
}

func (s *Store) indexNode(e *entry) {
	if e.node == "" {
		return
	}
	if s.byNode[e.node] == nil {
		s.byNode[e.node] = map[types.NamespacedName]*entry{}
	}
	s.byNode[e.node][e.key] = e
}

func (s *Store) unindexNode(e *entry) {
	if e.node == "" {
		return
	}
	delete(s.byNode[e.node], e.key)
	if len(s.byNode[e.node]) == 0 {
		delete(s.byNode, e.node)
	}
}
