package reservationstore

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// Transition is a phase change the reaper made, as the reaper logs it (the status writer learns
// of the change through the Outbox).
type Transition struct {
	Key      types.NamespacedName
	From, To v1alpha1.ReservationPhase
	At       time.Time
	// Hold: a deleted pod's hold that no Reservation took over; it is gone. To is Expired
	// when its place was released unused, Matched when a replacement had consumed it.
	Hold bool
}

// ExpireDue expires every Reserved reservation whose deadline is not after now: the
// placeholder is released and the phase becomes Expired. It pops only what is due:
// O(k log n) for k due of n reservations.
//
// Only the leader calls it: a reservation's expiry is the leader's decision, which the
// other replicas learn from the status it writes (see applyRecorded). A standby that takes
// over calls it from then on; deadlines already past (counted from the recorded
// reservedAt) expire at its first call.
func (s *Store) ExpireDue(now time.Time) []Transition {
	var out []Transition
	for s.deadlines.Len() > 0 && !now.Before(s.deadlines[0].at) {
		e := s.deadlines[0].entry
		s.expire(e, e.expiresAt)
		s.changed(e)
		out = append(out, Transition{Key: e.key, From: v1alpha1.ReservationReserved, To: v1alpha1.ReservationExpired, At: now})
	}
	return out
}

// DropDueHolds drops every hold whose deadline is not after now and that no Reservation
// took over. Every replica calls it: a hold is in-process (each replica placed its own when
// it saw the pod go), like an assumed pod; the Reservation that takes it over is what the
// leader decides for. A Reserved hold ends Expired (its place released unused); a Matched
// one ends consumed (its replacement holds the place; nothing is released).
func (s *Store) DropDueHolds(now time.Time) []Transition {
	var out []Transition
	for s.holdDeadlines.Len() > 0 && !now.Before(s.holdDeadlines[0].at) {
		e := heap.Pop(&s.holdDeadlines).(*entry)
		from, to := e.phase, v1alpha1.ReservationExpired
		if from == v1alpha1.ReservationMatched {
			to = v1alpha1.ReservationMatched
		}
		s.settled(e) // a consumed one is counted so, if it is not yet
		s.dropHold(e)
		s.settled(e) // Expired now: counted so unless a pod consumed it
		out = append(out, Transition{Key: e.key, From: from, To: to, At: now, Hold: true})
	}
	return out
}

// deadline is one heap slot: the expiry sits next to the entry so that comparisons do not
// follow pointers.
type deadline struct {
	at    time.Time
	entry *entry
}

// deadlineHeap orders Reserved reservations by expiry, earliest first (container/heap).
// Each entry knows its index, so a reservation that is matched or deleted leaves the heap in
// O(log n); the reaper pops only what is due, O(k log n) for k due of n.
type deadlineHeap []deadline

var _ heap.Interface = (*deadlineHeap)(nil)

// Len implements heap.Interface.
func (h deadlineHeap) Len() int { return len(h) }

// Less implements heap.Interface: earlier expiry first, then namespace and name, so the
// order is total (deadlines in whole seconds are often equal).
func (h deadlineHeap) Less(i, j int) bool {
	return olderFirst(h[i].at, h[i].entry.key, h[j].at, h[j].entry.key)
}

// Swap implements heap.Interface.
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].entry.heapIndex = i
	h[j].entry.heapIndex = j
}

// Push implements heap.Interface.
func (h *deadlineHeap) Push(x any) {
	e := x.(*entry)
	e.heapIndex = len(*h)
	*h = append(*h, deadline{at: e.expiresAt, entry: e})
}

// Pop implements heap.Interface.
func (h *deadlineHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = deadline{}
	*h = old[:len(old)-1]
	d.entry.heapIndex = -1
	return d.entry
}
