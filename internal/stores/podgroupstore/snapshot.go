package podgroupstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of every group's status.
type Snapshot = stores.MapSnapshot[types.NamespacedName, GroupStatus]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return stores.NewMapSnapshot[types.NamespacedName, GroupStatus](stores.PodGroupStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.groups, snap.(*Snapshot).Items(), since, func(_ GroupStatus, g *group) GroupStatus { return g.status() }, nil)
}
