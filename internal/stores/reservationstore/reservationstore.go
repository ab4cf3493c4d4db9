// Package reservationstore keeps Reservations: resources held on a node for the pods a
// reservation's selector matches.
//
// Phases: Pending (no node) -> Reserved (a placeholder pod charges the resources on the
// node: the handler takes it from the store's Outbox to every store but this one and the
// PodStore) -> Matched (a pod consumed it: the placeholder is released, so nothing is
// counted twice) or Expired (the
// TTL ran out unmatched: the placeholder is released). Reserved deadlines sit in a min-heap
// the reaper pops.
//
// Who may consume a Reserved reservation (same namespace, selected, guaranteed pool, not
// terminal, one reservation per pod):
//
//   - A pod a scheduler assumes onto the reservation's node, whatever its creation time or
//     the reservation's: it is being placed now, while the reservation exists. The match is
//     held while the pod is only assumed; if it is forgotten, expires, goes or is bound
//     elsewhere, the reservation is Reserved again with the same deadline.
//     MatchableFor lists, for a pod not yet bound, every Reserved reservation that selects
//     it (on its node when it names one).
//   - A pod the API reports bound to the node, if it landed there (its PodScheduled
//     condition's transition to True, else its creation) no earlier than the reservation
//     was created. A pod already running on the node when the reservation was created is
//     not the one it is for (the replacement it holds room for is), so it never consumes
//     it, whichever arrives first. Several such pods and reservations on one node are
//     paired from scratch (settle): pods in the order they landed, each taking the oldest
//     open reservation that accepts it. The outcome is a function of the objects, not of
//     the order a relist delivers them in.
//   - The pod a reservation's status records (phase Matched, currentOwner): what a status
//     records is an input, kept across a restart whatever the relist order, and it wins
//     over a local expiry (the old leader saw the match in time); a match the cache made
//     for the same pod gives way to it. If several statuses record the same pod (a status
//     writer working from a view a moment old), the preferred of them (oldest, then by
//     namespace/name) keeps it and the others count as recording nothing: they are placed
//     and settled like any other, and their status writer overwrites them.
//
// Once the API confirmed the owner, the reservation stays Matched when the owner goes or
// finishes (consumed). Until the status writer recorded it, a match of API pods may still
// be paired differently when a pod that landed earlier turns up late (a relist); after a
// restart only the status remembers it.
//
// Times are the leader's: only its reaper calls ExpireDue. Every replica places a
// reservation by its own clock until a status records reservedAt, then counts the deadline
// from the recorded one, and applies a recorded expiry (applyRecorded).
//
// A deleted pod annotated multicache.dev/reserve-on-delete keeps its place through a hold,
// a provisional reservation the leader's Reservation takes over (see ondelete.go).
package reservationstore

import (
	"container/heap"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
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
	// owner is the pod that matched the reservation, and how it came to (Matched only).
	owner                 *v1alpha1.PodReference
	how                   matchKind
	reservedAt, expiresAt time.Time
	// recording is the owner the status records (phase Matched, currentOwner, a node),
	// indexed in byRecording; nil when it records none. It stays while the entry is
	// Matched by it, if a later status records nothing.
	recording *v1alpha1.PodReference
	// heapIndex is the position in the deadline heap, -1 when not in it.
	heapIndex int
	// replacesSince is when the pod whose place the reservation keeps was deleted
	// (v1alpha1.ReplacesSinceAnnotation); zero for an ordinary reservation. Pods that landed
	// since then may consume it, and it is Reserved from then.
	replacesSince time.Time
	// provisional marks a hold (see ondelete.go): a deleted pod's place, kept until the
	// Reservation the leader creates for it takes over. Not an API object; it stays in the
	// deadline heap whatever its phase, and is dropped at its deadline.
	provisional bool
	// why says why a hold, or the Reservation that took it over, exists or ended (for the
	// log and the Reservation's Events); "" for an ordinary reservation.
	why string
	// ended says why it was released early (its owner no longer wants a replacement).
	ended string
	// counted: its reserve-on-delete result was counted (see settled).
	counted bool
	// awaiting is the node its spec names while the cache does not know it (Pending).
	awaiting string
}

// Store is the ReservationStore.
type Store struct {
	h    *stores.CacheHandler
	rsvs *store.Versioned[types.NamespacedName, *entry]
	// byNode indexes Reserved and Matched reservations by node.
	byNode map[string]map[types.NamespacedName]*entry
	// byOwner indexes Matched reservations by their owner's namespace/name (owners of
	// another UID of the same name included: sameRef tells them apart).
	byOwner map[types.NamespacedName][]*entry
	// byRecording indexes the reservations whose status records an owner by that owner's
	// namespace/name: the candidates of resolveRecorded.
	byRecording map[types.NamespacedName][]*entry
	// deadlines are the Reserved reservations' expiries, which only the leader's reaper
	// acts on (ExpireDue); holdDeadlines are the holds', which every replica acts on
	// (DropDueHolds): a hold is in-process, like an assumed pod.
	deadlines, holdDeadlines deadlineHeap
	// owners are the workload owners: ReplicaSets, StatefulSets, DaemonSets, Jobs and
	// Deployments, and the others annotated reserve-on-delete (see owners.go).
	owners map[store.OwnerKey]ownerInfo
	// landed counts each ReplicaSet's (and Job's) landed live pods, by its UID.
	landed map[types.UID]int32
	// byReplacedOwner indexes holds and replacement Reservations by the UID of the
	// controller of the pod they keep the place of.
	byReplacedOwner map[types.UID]map[types.NamespacedName]struct{}
	// awaitingNode indexes the reservations that await a node by its name (see nodes.go).
	awaitingNode map[string]map[types.NamespacedName]struct{}
	// inflight is the pod of the pod event being handled, and whether it is a
	// scheduler's assumption (see fromAPI).
	inflight struct {
		pod     *corev1.Pod
		assumed bool
	}
	// Outbox holds the placeholder events and changed statuses asked for during the
	// current call, until the handler takes them.
	stores.Outbox
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.PodHandler         = (*Store)(nil)
	_ store.ReservationHandler = (*Store)(nil)
	_ store.OwnerHandler       = (*Store)(nil)
)

// New returns an empty ReservationStore.
func New(h *stores.CacheHandler) *Store {
	return &Store{
		h:           h,
		rsvs:        store.NewVersioned[types.NamespacedName, *entry](h.Generations()),
		byNode:      map[string]map[types.NamespacedName]*entry{},
		byOwner:     map[types.NamespacedName][]*entry{},
		byRecording: map[types.NamespacedName][]*entry{},
		owners:      map[store.OwnerKey]ownerInfo{},
		landed:      map[types.UID]int32{},

		byReplacedOwner: map[types.UID]map[types.NamespacedName]struct{}{},
		awaitingNode:    map[string]map[types.NamespacedName]struct{}{},
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
// Expired reservation stays expired, a Matched one stays matched by the owner its status
// records, and a Reserved one keeps its reservedAt (so its deadline does not move).
func (s *Store) AddReservation(r *v1alpha1.Reservation) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	// counted: a reserve-on-delete result is counted for the holds this replica placed,
	// once: by the hold's entry, which its Reservation takes over, or by the Reservation
	// that replaces a hold it would not take over (one the status writer already wrote,
	// say); a Reservation that comes with no hold here (its hold was released before it
	// came, or this replica started since) counts none.
	counted := true
	if hold, ok := s.rsvs.Get(key); ok && hold.provisional {
		if s.takeOver(hold, r) {
			s.changed(hold)
			return
		}
		counted = hold.counted
	}
	e := &entry{key: key, r: r, selector: selectorOf(r), replacesSince: replacesSince(r), heapIndex: -1, counted: counted}
	s.rsvs.Set(key, e)
	s.indexReplaced(e)
	if t := r.Status.ReservedAt; t != nil {
		e.reservedAt = t.Time
	}
	switch {
	case r.Status.Phase == v1alpha1.ReservationExpired:
		s.expiredAsRecorded(e)
	case isRecorded(r):
		if !e.reservedAt.IsZero() {
			e.expiresAt = e.reservedAt.Add(s.ttl(e))
		}
		// Matched by that owner, unless another status records it too and is preferred:
		// then placed as if it recorded nothing.
		s.setRecording(e, r.Status.CurrentOwner)
		s.settle(s.resolveRecorded(ownerKey(r.Status.CurrentOwner))...)
	default:
		s.place(e)
		if s.unwanted(e) {
			// The leader created it while its hold was there, and the hold was released
			// before it came (a replacement landed meanwhile); counted with the hold.
			s.expire(e, s.h.Clock().Now())
		}
	}
	s.changed(e)
}

// UpdateReservation applies a new object. A spec change places a Pending or Reserved
// reservation again (same reservedAt), and one Matched by a derived owner too; other
// Matched and Expired ones keep their outcome. The recorded times and expiry are the
// leader's (see applyRecorded). A status that records an owner (the status writer's own,
// or an old leader's) is an input, as at a restart: the reservation is Matched by that
// owner, even if this replica expired it (the writer records only an owner the API
// confirmed, so the old leader saw the match in time), unless another status records the
// same owner and is preferred (see resolveRecorded).
func (s *Store) UpdateReservation(oldR, newR *v1alpha1.Reservation) {
	e, ok := s.rsvs.Get(types.NamespacedName{Namespace: newR.Namespace, Name: newR.Name})
	if !ok {
		s.AddReservation(newR)
		return
	}
	s.unindexReplaced(e) // its owner references may change (an orphaned one, adopted)
	e.r = newR
	s.indexReplaced(e)
	if !equality.Semantic.DeepEqual(oldR.Spec, newR.Spec) {
		e.selector, e.replacesSince = selectorOf(newR), replacesSince(newR)
		if e.phase == v1alpha1.ReservationPending || e.phase == v1alpha1.ReservationReserved || e.how == derived {
			oldNode := e.node
			s.disown(e)
			s.release(e)
			s.place(e)
			if oldNode != "" && oldNode != e.node {
				s.settle(oldNode) // a derived owner e had may consume another reservation there
			}
		}
	}
	s.placeAsRecorded(e)
	if !s.nodeExists(e.node) {
		s.awaitAsRecorded(e)
	}
	s.applyRecorded(e, newR)
	switch prev := e.recording; {
	case isRecorded(newR):
		s.setRecording(e, newR.Status.CurrentOwner)
		dirty := s.resolveRecorded(ownerKey(newR.Status.CurrentOwner))
		if prev != nil && ownerKey(prev) != ownerKey(newR.Status.CurrentOwner) {
			dirty = append(dirty, s.resolveRecorded(ownerKey(prev))...) // another may record prev now
		}
		s.settle(dirty...)
	case prev != nil && e.how != recorded:
		// A status that gave way records nothing any more: nothing else changes.
		s.setRecording(e, nil)
	}
	s.changed(e)
}

// DeleteReservation releases what a reservation holds and forgets it. Its owner, if still
// there, has consumed nothing any more (a relist would not see the reservation) and may
// consume another reservation under the landing rule.
func (s *Store) DeleteReservation(r *v1alpha1.Reservation) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	e, ok := s.rsvs.Get(key)
	if !ok {
		return
	}
	s.release(e)
	s.rsvs.Delete(key)
	s.unindexReplaced(e)
	s.unawait(e)
	if rec := e.recording; rec != nil {
		s.setRecording(e, nil)
		// Another status that records the same owner may keep it now.
		defer func() { s.settle(s.resolveRecorded(ownerKey(rec))...) }()
	}
	if e.owner == nil {
		return
	}
	owner := *e.owner
	s.disown(e)
	s.settle(e.node)
	// A recorded owner may be on another node than the reservation.
	if st, ok := s.h.GetPodState(ownerKey(&owner)); ok && sameRef(&owner, refOf(st.Pod)) && st.Pod.Spec.NodeName != e.node {
		s.settle(st.Pod.Spec.NodeName)
	}
}

// AddPod is the API reporting a pod: if it is on a node, it may consume a reservation
// there (see the package doc).
func (s *Store) AddPod(pod *corev1.Pod) {
	defer s.begin(pod, false)()
	s.reported(pod, false)
	s.countLanded(nil, pod)
}

// UpdatePod is the API reporting a new version of a pod, or a scheduler's assumption being
// forgotten (back to the API's copy). An assumed owner confirmed on the reservation's node
// keeps it; one forgotten or bound elsewhere gives it back. An owner that stopped
// qualifying after the API confirmed it has consumed it for good.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	defer s.begin(newPod, false)()
	s.reported(newPod, s.assumed(store.PodKey(newPod)))
	s.countLanded(oldPod, newPod)
}

// AssumePod is a scheduler assuming pod onto the node in its spec (oldPod is the API's
// unbound copy, nil when the API has not reported the pod). The handler calls it for an
// assumption instead of AddPod or UpdatePod: the pod lands now, so it may consume any
// Reserved reservation there that selects it, whatever its creation time.
func (s *Store) AssumePod(oldPod, pod *corev1.Pod) {
	defer s.begin(pod, true)()
	defer s.countLanded(oldPod, pod)
	if _, consumed := s.consumedBy(pod); consumed || !eligible(pod) {
		return
	}
	s.arrive(pod)
}

// DeletePod handles a pod going: if the API had confirmed the owner of a reservation, the
// reservation stays Matched (consumed); if the owner was only assumed (forgotten, expired,
// or deleted before the API confirmed it), the reservation is Reserved again.
//
// The reservations a deleted pod consumed leave the owner index: a pod of the same name
// that comes later is another pod.
func (s *Store) DeletePod(pod *corev1.Pod) {
	defer s.countLanded(pod, nil)
	active, consumed := s.consumedBy(pod)
	if !consumed {
		return
	}
	if active != nil && active.how == held && s.assumed(store.PodKey(pod)) {
		s.reopen(active)
		s.settle(active.node)
		return
	}
	var gone []*entry // collected first: unlink edits byOwner
	for _, e := range s.byOwner[store.PodKey(pod)] {
		if sameRef(e.owner, refOf(pod)) {
			gone = append(gone, e)
		}
	}
	for _, e := range gone {
		s.unlink(e)
		if e.how == held || e.how == derived {
			e.how = spent
		}
		s.changed(e)
	}
}

// reported handles the API's copy of a pod (wasAssumed: the cache held it assumed).
func (s *Store) reported(pod *corev1.Pod, wasAssumed bool) {
	active, consumed := s.consumedBy(pod)
	if active != nil {
		if pod.Spec.NodeName == active.node {
			s.confirmOwner(active, pod)
			return
		}
		// An assumed owner forgotten (back to the API's unbound copy) or bound elsewhere.
		s.reopen(active)
		s.settle(active.node)
		consumed = false
	} else if consumed && wasAssumed {
		for _, e := range s.byOwner[store.PodKey(pod)] {
			if sameRef(e.owner, refOf(pod)) {
				s.changed(e) // confirmed: the status writer may now record the match
			}
		}
	}
	if consumed || !eligible(pod) {
		return
	}
	landed := landedAt(pod)
	if landed.IsZero() {
		s.arrive(pod)
		return
	}
	// Only a pod some open reservation there accepts can change how the node pairs: one
	// that consumed nothing and no longer qualifies changes nothing by leaving.
	for _, e := range s.byNode[pod.Spec.NodeName] {
		if (e.phase == v1alpha1.ReservationReserved || e.how == derived) && e.accepts(pod, landed) {
			s.settle(pod.Spec.NodeName)
			return
		}
	}
}

// confirmOwner handles the API's copy of the owner of e on e's node: it keeps e while the
// landing rule gives it e (derived, settled with the node's other pods), keeps it held when
// its landing time is unknown, and has consumed it for good when it no longer qualifies.
func (s *Store) confirmOwner(e *entry, pod *corev1.Pod) {
	landed := landedAt(pod)
	switch {
	case !eligible(pod) || !e.selects(pod) || (!landed.IsZero() && !e.accepts(pod, landed)):
		e.how = spent
	case !landed.IsZero():
		e.how = derived
		s.settle(e.node)
	}
	s.changed(e) // the owner's object (or its confirmation) changed
}

// begin marks a pod event in flight (see fromAPI) until the function it returns is called.
func (s *Store) begin(pod *corev1.Pod, assumed bool) (end func()) {
	s.inflight.pod, s.inflight.assumed = pod, assumed
	return func() { s.inflight.pod = nil }
}

// assumed reports whether the PodStore holds a pod assumed. During a pod event it still
// holds the state from before the event (it is updated last).
func (s *Store) assumed(key types.NamespacedName) bool {
	st, ok := s.h.GetPodState(key)
	return ok && st.State == store.PodAssumed
}

// ttl returns how long a reservation may stay Reserved unmatched.
func (s *Store) ttl(e *entry) time.Duration {
	if t := e.r.Spec.TTLSeconds; t != nil {
		return time.Duration(*t) * time.Second
	}
	return s.h.ReservationDefaultTTL()
}

// changed records a change for snapshots and tells the status writer.
func (s *Store) changed(e *entry) {
	s.settled(e)
	s.rsvs.Touch(e.key)
	s.ObjectChanged(stores.KindReservation, e.key)
}

func ownerKey(ref *v1alpha1.PodReference) types.NamespacedName {
	return types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
}

// applyRecorded makes what a status records about a reservation's times an input, on
// every replica: the leader decided them (see ExpireDue). A recorded expiry ends a Reserved
// reservation, or one a pod matched here that the leader did not see (the leader's view is
// the one recorded); a recorded reservedAt is the one the deadline counts from. An Expired
// reservation stays Expired: the leader never records Reserved after Expired, so a Reserved
// record arriving later is an old one.
func (s *Store) applyRecorded(e *entry, r *v1alpha1.Reservation) {
	switch {
	case e.phase == v1alpha1.ReservationExpired:
		if r.Status.Phase == v1alpha1.ReservationExpired {
			// The leader's times, where this replica ended it itself (released it, or
			// expired it when it led and lost the lease before writing): both, lest it
			// write its own reservedAt beside the recorded expiry when it leads.
			if t := r.Status.ReservedAt; t != nil {
				e.reservedAt = t.Time
			}
			if t := r.Status.ExpiresAt; t != nil {
				e.expiresAt = t.Time
			}
		}
		return
	case r.Status.Phase == v1alpha1.ReservationExpired && (e.phase == v1alpha1.ReservationReserved || e.how == held || e.how == derived):
		if t := r.Status.ReservedAt; t != nil {
			e.reservedAt = t.Time
		}
		at := e.reservedAt.Add(s.ttl(e))
		if t := r.Status.ExpiresAt; t != nil {
			at = t.Time
		}
		s.expire(e, at)
		return
	case e.phase != v1alpha1.ReservationReserved && e.phase != v1alpha1.ReservationMatched:
		return
	}
	t := r.Status.ReservedAt
	if t == nil || t.Time.Equal(e.reservedAt) || r.Spec.NodeName != e.node {
		return
	}
	e.reservedAt, e.expiresAt = t.Time, t.Time.Add(s.ttl(e))
	if i := e.heapIndex; i >= 0 {
		h := s.heapOf(e)
		(*h)[i].at = e.expiresAt
		heap.Fix(h, i)
	}
}

// expire ends a Reserved reservation, or one matched by a pod that may still change (held
// or derived): no placeholder, no owner, Expired at at. A pod it gave itself to may consume
// another reservation on the node.
func (s *Store) expire(e *entry, at time.Time) {
	owned := e.owner != nil
	s.disown(e)
	s.release(e)
	if e.heapIndex >= 0 {
		s.unheap(e)
	}
	e.phase, e.expiresAt = v1alpha1.ReservationExpired, at
	if owned && e.node != "" {
		s.settle(e.node)
	}
}

// heapOf is the heap e's deadline sits in: a hold's, or a reservation's.
func (s *Store) heapOf(e *entry) *deadlineHeap {
	if e.provisional {
		return &s.holdDeadlines
	}
	return &s.deadlines
}

// unheap takes e out of the deadline heap.
func (s *Store) unheap(e *entry) {
	heap.Remove(s.heapOf(e), e.heapIndex)
}
