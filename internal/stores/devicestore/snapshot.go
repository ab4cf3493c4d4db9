package devicestore

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of every node's devices.
type Snapshot = stores.MapSnapshot[string, NodeDevices]

// NewSnapshot implements stores.Store. Nodes are not filtered: a device view without its
// node in a sub-cluster's snapshot is never read.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return stores.NewMapSnapshot[string, NodeDevices](stores.DeviceStoreName)
}

// UpdateSnapshot implements stores.Store: only the nodes whose devices, holders or classes
// changed since are recomputed.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	ms := snap.(*Snapshot)
	stores.Sync(s.views, ms.Items(), since, func(_ NodeDevices, e *nodeEntry) NodeDevices { return s.view(e) }, nil)
}
