package reservationstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every reservation's view and what matching it needs.
type Snapshot = store.MapSnapshot[types.NamespacedName, snapView]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[types.NamespacedName, snapView](stores.ReservationStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.rsvs, snap.(*Snapshot).Items(), since, func(_ snapView, e *entry) snapView { return s.snapView(e) }, nil)
}
