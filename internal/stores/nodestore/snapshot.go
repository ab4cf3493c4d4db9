package nodestore

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of the NodeInfos, refreshed incrementally: only nodes whose generation
// moved are copied, in place, so pointers a reader holds stay valid.
type Snapshot struct {
	infos map[string]*store.NodeInfo
	list  []*store.NodeInfo
	keep  func(*store.NodeInfo) bool
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.NodeStoreName }

// Get returns the NodeInfo of a node.
func (s *Snapshot) Get(name string) (*store.NodeInfo, bool) {
	info, ok := s.infos[name]
	return info, ok
}

// List returns every NodeInfo, in no particular order. The slice is shared: do not modify.
func (s *Snapshot) List() []*store.NodeInfo { return s.list }

// Len returns the number of nodes.
func (s *Snapshot) Len() int { return len(s.infos) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(opts store.SnapshotOptions) store.Snapshot {
	return &Snapshot{infos: map[string]*store.NodeInfo{}, keep: opts.NodeFilter}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ns := snap.(*Snapshot)
	res := store.Sync(s.nodes, ns.infos, since, copyNodeInfo, ns.keep)
	if res.SetChanged {
		ns.list = ns.list[:0]
		for _, info := range ns.infos {
			ns.list = append(ns.list, info)
		}
		clear(ns.list[len(ns.list):cap(ns.list)])
	}
}

func copyNodeInfo(prev *store.NodeInfo, live *store.NodeInfo) *store.NodeInfo {
	if prev == nil {
		return live.Clone()
	}
	live.CopyInto(prev)
	return prev
}
