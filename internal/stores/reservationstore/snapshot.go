package reservationstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of every reservation's view.
type Snapshot = stores.MapSnapshot[types.NamespacedName, View]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return stores.NewMapSnapshot[types.NamespacedName, View](stores.ReservationStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.rsvs, snap.(*Snapshot).Items(), since, func(_ View, e *entry) View { return s.view(e) }, nil)
}
