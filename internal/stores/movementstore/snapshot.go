package movementstore

import "github.com/seed0f91f25e/multicache/internal/stores"

// Snapshot is a copy of every movement's view.
type Snapshot struct {
	movements map[string]MovementView
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.MovementStoreName }

// Get returns one movement.
func (s *Snapshot) Get(name string) (MovementView, bool) {
	v, ok := s.movements[name]
	return v, ok
}

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return &Snapshot{movements: map[string]MovementView{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.movements, snap.(*Snapshot).movements, since, func(_ MovementView, mv *movement) MovementView { return mv.view() }, nil)
}
