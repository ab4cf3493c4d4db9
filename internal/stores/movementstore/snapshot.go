package movementstore

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every movement's view.
type Snapshot = store.MapSnapshot[string, MovementView]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[string, MovementView](stores.MovementStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.movements, snap.(*Snapshot).Items(), since, func(_ MovementView, mv *movement) MovementView { return mv.view() }, nil)
}
