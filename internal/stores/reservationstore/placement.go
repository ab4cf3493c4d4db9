package reservationstore

import (
	"container/heap"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// matchKind says how the owner of a Matched reservation came to hold it, and so what may
// still change it.
type matchKind uint8

const (
	// unmatched: not Matched.
	unmatched matchKind = iota
	// recorded: the reservation's status records the owner (phase Matched, currentOwner).
	// What a status records is an input: kept whatever order a relist delivers objects in.
	recorded
	// held: a scheduler assumed the owner onto the node (or, in tests, a pod whose landing
	// time is unknown arrived there). Kept while the owner stays; undone if it leaves before
	// the API confirms it.
	held
	// derived: the landing rule gives the reservation to this API pod. Recomputed (settle)
	// whenever the node's pods or reservations change, so that the outcome does not depend
	// on the order events arrive in; the status writer soon records it.
	derived
	// spent: the owner consumed it, then left or stopped qualifying after the API confirmed
	// it. Consumed for good.
	spent
)

func (k matchKind) String() string {
	return [...]string{"", "recorded", "held", "derived", "spent"}[k]
}

// place puts a reservation that holds nothing where it belongs: Pending without a node or
// on a node the cache does not know, else Reserved on its node, where the pods that qualify may then consume it (settle).
func (s *Store) place(e *entry) {
	s.unawait(e)
	node := e.r.Spec.NodeName
	if node == "" {
		e.phase, e.node = v1alpha1.ReservationPending, ""
		return
	}
	// A status that records it placed (Reserved or Matched) is an input: a replica that
	// starts after the node went places it as the one that saw the node did (a node deleted
	// keeps what was placed on it), instead of awaiting a node that may never come back.
	if p := e.r.Status.Phase; !s.nodeExists(node) && p != v1alpha1.ReservationReserved && p != v1alpha1.ReservationMatched {
		s.await(e, node) // see nodes.go
		return
	}
	e.node = node
	s.indexNode(e)
	switch {
	case !e.reservedAt.IsZero():
	case !e.replacesSince.IsZero():
		// A deleted pod's place is held from the deletion, on every replica and across
		// restarts alike (the annotation says when).
		e.reservedAt = e.replacesSince
	default:
		// Whole seconds, as the status stores it: after a restart the deadline recovered
		// from status.reservedAt is the same one.
		e.reservedAt = s.h.Clock().Now().Truncate(time.Second)
	}
	e.expiresAt = e.reservedAt.Add(s.ttl(e))
	s.reserve(e)
	s.settle(node)
}

// reserve charges the placeholder on the reservation's node (where it was placed, even if
// a later spec names another one) and arms the deadline.
func (s *Store) reserve(e *entry) {
	e.phase = v1alpha1.ReservationReserved
	e.placeholder = store.NewPlaceholderPod(e.r, e.node)
	s.AskPodOp(e.placeholder, true)
	if e.heapIndex < 0 {
		heap.Push(s.heapOf(e), e)
	}
}

// setOwner makes e Matched by owner: the placeholder goes, so nothing is counted twice.
func (s *Store) setOwner(e *entry, owner *v1alpha1.PodReference, how matchKind) {
	s.dropPlaceholder(e)
	s.disown(e)
	e.phase, e.owner, e.how = v1alpha1.ReservationMatched, owner, how
	s.link(e)
}

// disown takes a Matched reservation back from its owner; the caller re-reserves it or
// hands it to another pod.
func (s *Store) disown(e *entry) {
	if e.owner != nil {
		s.unlink(e)
	}
	e.owner, e.how = nil, unmatched
}

// reopen makes a Matched reservation Reserved again (same deadline); the caller settles its
// node, where another pod may consume it.
func (s *Store) reopen(e *entry) {
	s.disown(e)
	s.reserve(e)
	s.changed(e)
}

// release undoes place: no placeholder, no deadline, out of the node index.
func (s *Store) release(e *entry) {
	s.dropPlaceholder(e)
	s.unindexNode(e)
}

func (s *Store) dropPlaceholder(e *entry) {
	if e.placeholder != nil {
		s.AskPodOp(e.placeholder, false)
		e.placeholder = nil
	}
	if e.heapIndex >= 0 && !e.provisional {
		s.unheap(e)
	}
}

// resolveRecorded brings the reservations whose status records an owner of that
// namespace/name in line: a pod consumes one reservation, so of the statuses that record
// the same pod the preferred one (see preferred) keeps it, whatever order they arrived in,
// and the others count as recording nothing (placed and settled like any other
// reservation; their status writer then overwrites them). A local expiry of one that
// gave way stands. It returns the nodes to settle.
func (s *Store) resolveRecorded(key types.NamespacedName) []string {
	cands := slices.Clone(s.byRecording[key])
	sort.Slice(cands, func(i, j int) bool { return preferred(cands[i], cands[j]) })
	var dirty []string
	var kept []*entry
	for _, e := range cands {
		if !slices.ContainsFunc(kept, func(k *entry) bool { return sameRef(k.recording, e.recording) }) {
			kept = append(kept, e)
			dirty = append(dirty, s.record(e)...)
			continue
		}
		switch {
		case e.how == recorded:
			s.disown(e)
			s.place(e) // settles its node
			s.changed(e)
		case e.phase == "":
			s.place(e) // new (AddReservation)
		}
	}
	return dirty
}

// record makes e Matched by the owner its status records (e.recording), at the times it
// records, also if this replica expired it. A pod consumes one reservation: a match the cache made for the same
// pod (held or derived) gives way to the recorded one and is Reserved again. It returns
// the nodes to settle.
func (s *Store) record(e *entry) []string {
	owner := *e.recording
	if e.how == recorded && *e.owner == owner {
		return nil
	}
	switch e.phase {
	case "", v1alpha1.ReservationPending, v1alpha1.ReservationExpired:
		// New, Pending or expired here: it holds no placeholder and is on no node yet.
		s.unawait(e)
		e.node = e.r.Spec.NodeName
		s.indexNode(e)
	}
	// The times are the leader's too: an entry never placed here (it awaited its node) has
	// none of its own, and one placed here counts from the recorded reservedAt as well.
	if t := e.r.Status.ReservedAt; t != nil {
		e.reservedAt = t.Time
		e.expiresAt = e.reservedAt.Add(s.ttl(e))
	}
	dirty := []string{e.node} // a derived owner e had may consume another reservation there
	s.setOwner(e, &owner, recorded)
	var undone []*entry // collected first: reopen edits byOwner
	for _, other := range s.byOwner[ownerKey(&owner)] {
		if other != e && (other.how == held || other.how == derived) && sameRef(other.owner, &owner) {
			undone = append(undone, other)
		}
	}
	for _, other := range undone {
		s.reopen(other)
		dirty = append(dirty, other.node)
	}
	return dirty
}

// isRecorded reports whether a reservation's status records a match on a node.
func isRecorded(r *v1alpha1.Reservation) bool {
	return r.Status.Phase == v1alpha1.ReservationMatched && r.Status.CurrentOwner != nil && r.Spec.NodeName != ""
}

// consumedBy returns what pod consumed: active is the reservation the cache matched to it
// that may still change (held or derived), if any; consumed whether it consumed any at
// all (recorded and spent ones included). A pod of the same name but another UID
// (recreated) consumed nothing.
func (s *Store) consumedBy(pod *corev1.Pod) (active *entry, consumed bool) {
	for _, e := range s.byOwner[store.PodKey(pod)] {
		if !sameRef(e.owner, refOf(pod)) {
			continue
		}
		consumed = true
		if e.how == held || e.how == derived {
			active = e
		}
	}
	return active, consumed
}

// refOf is the reference to pod.
func refOf(pod *corev1.Pod) *v1alpha1.PodReference {
	return &v1alpha1.PodReference{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}

// sameRef reports whether two references name the same pod; an empty UID matches any.
func sameRef(a, b *v1alpha1.PodReference) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && (a.UID == "" || b.UID == "" || a.UID == b.UID)
}

// settle brings the node's open reservations (Reserved, or Matched by a derived owner) in
// line with the landing rule, from scratch: the API pods on the node that have consumed
// nothing else, in the order they landed (then by namespace/name), each take the best open
// reservation that accepts them (see preferred). Recorded, held and spent matches are
// fixed and take no part. The result depends only on the objects, not on the order they
// arrived in.
func (s *Store) settle(nodes ...string) {
	for _, node := range nodes {
		open, want := s.assignment(node)
		for _, e := range open {
			switch pod := want[e]; {
			case settledAs(e, pod):
			case pod == nil:
				s.reopen(e)
			default:
				s.setOwner(e, refOf(pod), derived)
				s.changed(e)
			}
		}
	}
}

// settledAs reports whether an open reservation is as the landing rule wants it: Reserved
// when it gives it to no pod, else Matched by pod.
func settledAs(e *entry, pod *corev1.Pod) bool {
	if pod == nil {
		return e.phase == v1alpha1.ReservationReserved
	}
	return e.owner != nil && *e.owner == *refOf(pod)
}

// assignment computes what settle makes of a node: its open reservations, best first, and
// the pod the landing rule gives each (absent: none). It changes nothing.
func (s *Store) assignment(node string) ([]*entry, map[*entry]*corev1.Pod) {
	var open []*entry
	for _, e := range s.byNode[node] {
		if e.phase == v1alpha1.ReservationReserved || (e.phase == v1alpha1.ReservationMatched && e.how == derived) {
			open = append(open, e)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	type candidate struct {
		pod    *corev1.Pod
		landed time.Time
	}
	// Best first, which is oldest first. A pod may consume only the reservations created
	// before it landed, a prefix of open, and those keeping a deleted pod's place since
	// before it landed (early: created later, they follow the prefix in preference order).
	// Searching only those keeps a burst of reservations on a node from costing
	// (pods x reservations) per reservation added.
	sort.Slice(open, func(i, j int) bool { return preferred(open[i], open[j]) })
	var early []*entry
	for _, e := range open {
		if !e.replacesSince.IsZero() && e.replacesSince.Before(e.r.CreationTimestamp.Time) {
			early = append(early, e)
		}
	}
	// forEachAccepting calls fn, in preference order, with every open reservation that
	// accepts pod, until fn returns false.
	forEachAccepting := func(pod *corev1.Pod, landed time.Time, fn func(*entry) bool) {
		n := sort.Search(len(open), func(i int) bool { return open[i].r.CreationTimestamp.Time.After(landed) })
		for _, e := range open[:n] {
			if e.accepts(pod, landed) && !fn(e) {
				return
			}
		}
		for _, e := range early {
			if e.r.CreationTimestamp.Time.After(landed) && e.accepts(pod, landed) && !fn(e) {
				return
			}
		}
	}
	var candidates []candidate
	if info, ok := s.h.GetNodeInfo(node); ok {
		for _, pod := range info.Pods {
			if !eligible(pod) {
				continue
			}
			landed := landedAt(pod)
			if landed.IsZero() {
				continue // tests only: such a pod consumes on arrival (held), see arrive
			}
			// Whether an open reservation accepts the pod is asked before the lookups by
			// key: most pods on a node are selected by none (at 150,000 pods, looking each
			// up first was most of the verify loop's check of this store, under the lock).
			accepted := false
			forEachAccepting(pod, landed, func(*entry) bool {
				accepted = true
				return false
			})
			if !accepted || !s.fromAPI(pod) {
				continue
			}
			if active, consumed := s.consumedBy(pod); consumed && (active == nil || active.how != derived) {
				continue
			}
			candidates = append(candidates, candidate{pod, landed})
		}
	}
	want := map[*entry]*corev1.Pod{}
	if len(candidates) == 0 {
		return open, want
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		return olderFirst(a.landed, store.PodKey(a.pod), b.landed, store.PodKey(b.pod))
	})
	for _, c := range candidates {
		forEachAccepting(c.pod, c.landed, func(e *entry) bool {
			if _, taken := want[e]; taken {
				return true
			}
			want[e] = c.pod
			return false
		})
	}
	return open, want
}

// fromAPI reports whether a pod charged on a node is the API's copy (not a scheduler's
// assumption). During a pod event the PodStore still holds the state from before it, so
// the pod of the event in flight is classified by the event itself.
func (s *Store) fromAPI(pod *corev1.Pod) bool {
	if s.inflight.pod != nil && pod == s.inflight.pod {
		return !s.inflight.assumed
	}
	st, ok := s.h.GetPodState(store.PodKey(pod))
	return ok && st.State == store.PodAdded
}

// arrive lets a pod that lands on a node now consume the best Reserved reservation there
// that selects it, whatever its creation time: a scheduler's assumption, or (tests only) an
// API pod whose landing time is unknown. The match is held: it stays while the pod does.
func (s *Store) arrive(pod *corev1.Pod) {
	var best *entry
	for _, e := range s.byNode[pod.Spec.NodeName] {
		if e.phase == v1alpha1.ReservationReserved && e.selects(pod) && (best == nil || preferred(e, best)) {
			best = e
		}
	}
	if best != nil {
		s.setOwner(best, refOf(pod), held)
		s.changed(best)
	}
}

// qualifies reports whether a pod can consume a reservation at all: running or about to,
// charged to the guaranteed pool (a reservation holds guaranteed resources).
func qualifies(pod *corev1.Pod) bool {
	_, isPlaceholder := store.PlaceholderOf(pod)
	return !store.IsTerminal(pod) && !store.IsBestEffort(pod) && !isPlaceholder
}

// eligible reports whether a pod on a node can consume a reservation there.
func eligible(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && qualifies(pod)
}

// selects reports whether the reservation is for pod: same namespace, selected.
func (e *entry) selects(pod *corev1.Pod) bool {
	return pod.Namespace == e.key.Namespace && e.selector.Matches(labels.Set(pod.Labels))
}

// accepts reports whether an API pod that landed on the reservation's node at landed may
// consume it: selected, and not landed before e.from().
func (e *entry) accepts(pod *corev1.Pod, landed time.Time) bool {
	return e.selects(pod) && !landed.Before(e.from())
}

// from is the earliest landing time of a bound pod the reservation accepts: its creation (a
// pod already running there when it was created is not the one it is for) or, for one that
// keeps a deleted pod's place, that pod's deletion (its replacement may land first).
func (e *entry) from() time.Time {
	if !e.replacesSince.IsZero() {
		return e.replacesSince
	}
	return e.r.CreationTimestamp.Time
}

// landedAt is when the API placed a pod on its node: its PodScheduled condition's
// transition to True (set by the binding), else its creation (a pod created with a node);
// zero when unknown (never for an object the API serves).
func landedAt(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// preferred orders the reservations a pod may consume: the oldest first, then by
// namespace/name.
func preferred(a, b *entry) bool {
	return olderFirst(a.r.CreationTimestamp.Time, a.key, b.r.CreationTimestamp.Time, b.key)
}

// olderFirst orders by time (of creation, landing or expiry), then by namespace/name.
func olderFirst(ta time.Time, a types.NamespacedName, tb time.Time, b types.NamespacedName) bool {
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
