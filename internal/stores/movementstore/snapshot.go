package movementstore

import "github.com/seed0f91f25e/multicache/internal/stores"

// Snapshot is a copy of every movement's view.
type Snapshot = stores.MapSnapshot[string, MovementView]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return stores.NewMapSnapshot[string, MovementView](stores.MovementStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.movements, snap.(*Snapshot).Items(), since, func(_ MovementView, mv *movement) MovementView { return mv.view() }, nil)
}
