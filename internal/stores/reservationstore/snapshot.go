package reservationstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every reservation's view.
type Snapshot = store.MapSnapshot[types.NamespacedName, View]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[types.NamespacedName, View](stores.ReservationStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.rsvs, snap.(*Snapshot).Items(), since, func(_ View, e *entry) View { return s.view(e) }, nil)
}
