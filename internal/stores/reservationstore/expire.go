package reservationstore

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// Transition is a phase change the reaper made, for the status writer.
type Transition struct {
	Key      types.NamespacedName
	From, To v1alpha1.ReservationPhase
	At       time.Time
	// Hold: a deleted pod's hold that no Reservation took over; it is gone.
	Hold bool
}

// ExpireDue expires every Reserved reservation whose deadline is not after now: the
// placeholder is released and the phase becomes Expired. It pops only what is due:
// O(k log n) for k due of n reservations.
func (s *Store) ExpireDue(now time.Time) []Transition {
	var out []Transition
	for s.deadlines.Len() > 0 && !now.Before(s.deadlines[0].at) {
		e := heap.Pop(&s.deadlines).(*entry)
		if e.provisional {
			from := e.phase
			s.dropHold(e)
			out = append(out, Transition{Key: e.key, From: from, To: v1alpha1.ReservationExpired, At: now, Hold: true})
			continue
		}
		s.release(e)
		e.phase = v1alpha1.ReservationExpired
		s.changed(e)
		out = append(out, Transition{Key: e.key, From: v1alpha1.ReservationReserved, To: v1alpha1.ReservationExpired, At: now})
	}
	return out
}

// NextDeadline returns the earliest deadline of a Reserved reservation.
func (s *Store) NextDeadline() (time.Time, bool) {
	if s.deadlines.Len() == 0 {
		return time.Time{}, false
	}
	return s.deadlines[0].at, true
}
