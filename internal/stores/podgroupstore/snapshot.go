package podgroupstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every group's status.
type Snapshot = store.MapSnapshot[types.NamespacedName, store.PodGroup]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[types.NamespacedName, store.PodGroup](stores.PodGroupStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.groups, snap.(*Snapshot).Items(), since, func(_ store.PodGroup, g *group) store.PodGroup { return g.status() }, nil)
}
