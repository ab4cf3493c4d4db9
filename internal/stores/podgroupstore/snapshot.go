package podgroupstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of every group's status.
type Snapshot struct {
	groups map[types.NamespacedName]GroupStatus
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PodGroupStoreName }

// Get returns the status of a group.
func (s *Snapshot) Get(key types.NamespacedName) (GroupStatus, bool) {
	g, ok := s.groups[key]
	return g, ok
}

// Len returns the number of groups.
func (s *Snapshot) Len() int { return len(s.groups) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return &Snapshot{groups: map[types.NamespacedName]GroupStatus{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.groups, snap.(*Snapshot).groups, since, func(_ GroupStatus, g *group) GroupStatus { return g.status() }, nil)
}
