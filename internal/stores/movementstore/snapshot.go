package movementstore

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every movement's view.
type Snapshot = store.MapSnapshot[string, store.Movement]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[string, store.Movement](stores.MovementStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.movements, snap.(*Snapshot).Items(), since, func(_ store.Movement, mv *movement) store.Movement { return mv.view() }, nil)
}
