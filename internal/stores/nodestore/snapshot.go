package nodestore

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of the NodeInfos, refreshed incrementally: only nodes whose generation
// moved are copied, in place, so pointers a reader holds stay valid.
type Snapshot struct {
	nodes map[string]*nodeCopy
	list  []*store.NodeInfo
	keep  func(*store.NodeInfo) bool
}

// nodeCopy is one node of a Snapshot: its NodeInfo and what each of its pods was charged,
// in the order of info.Pods (what a fork releases when it takes a pod off the node, without
// computing the pod's requests again).
type nodeCopy struct {
	info    store.NodeInfo
	charges []store.Resources
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.NodeStoreName }

// Get returns the NodeInfo of a node.
func (s *Snapshot) Get(name string) (*store.NodeInfo, bool) {
	if c, ok := s.nodes[name]; ok {
		return &c.info, true
	}
	return nil, false
}

// PodCharge returns the object a node holds for a pod (the very pointer when it is the
// same, else the pod of that namespace/name) and what the node was charged for it, as the
// store charged it: the pod's full requests, before the split of them into the node's
// pools. The Resources are shared: do not modify them. False when the node does not hold
// the pod.
func (s *Snapshot) PodCharge(node string, pod *corev1.Pod) (*corev1.Pod, store.Resources, bool) {
	c, ok := s.nodes[node]
	if !ok {
		return nil, store.Resources{}, false
	}
	if i := indexOf(c.info.Pods, pod); i >= 0 {
		return c.info.Pods[i], c.charges[i], true
	}
	return nil, store.Resources{}, false
}

// List returns every NodeInfo, in no particular order. The slice is shared: do not modify.
func (s *Snapshot) List() []*store.NodeInfo { return s.list }

// Len returns the number of nodes.
func (s *Snapshot) Len() int { return len(s.nodes) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(opts store.SnapshotOptions) store.Snapshot {
	return &Snapshot{nodes: map[string]*nodeCopy{}, keep: opts.NodeFilter}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ns := snap.(*Snapshot)
	res := store.Sync(s.nodes, ns.nodes, since, s.copyNode, ns.keep)
	if res.SetChanged {
		ns.list = ns.list[:0]
		for _, c := range ns.nodes {
			ns.list = append(ns.list, &c.info)
		}
		clear(ns.list[len(ns.list):cap(ns.list)])
	}
}

// copyNode copies live into prev (a new copy when nil), with its pods' charges. A pod at the
// same place in prev's list keeps the charge prev holds for it: one change to a node (an
// add, a swap-remove, a replace) looks up one charge, not the node's every pod.
func (s *Store) copyNode(prev *nodeCopy, live *store.NodeInfo) *nodeCopy {
	if prev == nil {
		prev = &nodeCopy{}
	}
	charges := prev.charges
	if cap(charges) < len(live.Pods) {
		charges = make([]store.Resources, len(live.Pods), len(live.Pods)+len(live.Pods)/4)
		copy(charges, prev.charges)
	}
	charges = charges[:len(live.Pods)]
	for i, p := range live.Pods {
		if i >= len(prev.info.Pods) || prev.info.Pods[i] != p {
			charges[i] = s.charges[p]
		}
	}
	clear(charges[len(charges):cap(charges)])
	prev.charges = charges
	live.CopyInto(&prev.info)
	return prev
}
