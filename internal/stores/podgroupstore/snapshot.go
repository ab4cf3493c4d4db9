package podgroupstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every group's status.
type Snapshot = store.MapSnapshot[types.NamespacedName, GroupStatus]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[types.NamespacedName, GroupStatus](stores.PodGroupStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.groups, snap.(*Snapshot).Items(), since, func(_ GroupStatus, g *group) GroupStatus { return g.status() }, nil)
}
