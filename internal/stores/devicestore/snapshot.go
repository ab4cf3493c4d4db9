package devicestore

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every node's devices.
type Snapshot = store.MapSnapshot[string, store.NodeDevices]

// NewSnapshot implements stores.Store. Nodes are not filtered: a device view without its
// node in a sub-cluster's snapshot is never read.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[string, store.NodeDevices](stores.DeviceStoreName)
}

// UpdateSnapshot implements stores.Store: only the nodes whose devices, holders or classes
// changed since are recomputed.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ms := snap.(*Snapshot)
	store.Sync(s.views, ms.Items(), since, func(_ store.NodeDevices, e nodeEntry) store.NodeDevices { return s.view(e) }, nil)
}
