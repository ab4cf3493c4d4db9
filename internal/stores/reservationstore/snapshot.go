package reservationstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of every reservation's view.
type Snapshot struct {
	rsvs map[types.NamespacedName]View
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.ReservationStoreName }

// Get returns one reservation.
func (s *Snapshot) Get(key types.NamespacedName) (View, bool) {
	v, ok := s.rsvs[key]
	return v, ok
}

// Len returns the number of reservations.
func (s *Snapshot) Len() int { return len(s.rsvs) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return &Snapshot{rsvs: map[types.NamespacedName]View{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.rsvs, snap.(*Snapshot).rsvs, since, func(_ View, e *entry) View { return s.view(e) }, nil)
}
