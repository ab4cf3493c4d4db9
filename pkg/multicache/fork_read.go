package multicache

import (
	"cmp"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodState returns a pod's state in the fork: the snapshot's, or store.PodAssumed on its
// node for a pod the fork added; false for a pod the fork removed.
func (f *Fork) PodState(key types.NamespacedName) (store.PodStatus, bool) {
	if change, changed := f.state.pods[key]; changed {
		if change.pod == nil {
			return store.PodStatus{}, false
		}
		return store.PodStatus{State: store.PodAssumed, Pod: change.pod}, true
	}
	return f.snap.PodState(key)
}

// PodsOnNode returns the pods charged to a node in the fork (not finished), with their
// state, by namespace/name; nil for a node the fork does not hold.
func (f *Fork) PodsOnNode(node string) []store.PodStatus {
	d := f.state.deltaOf(node)
	if d == nil {
		return f.snap.PodsOnNode(node)
	}
	if d.removed {
		return nil
	}
	base := f.snap.PodsOnNode(node)
	out := make([]store.PodStatus, 0, len(base)+len(d.added))
	for _, ps := range base {
		if _, changed := f.state.pods[store.PodKey(ps.Pod)]; !changed {
			out = append(out, ps)
		}
	}
	for _, pod := range d.added {
		if !store.IsTerminal(pod) { // as the snapshot: a finished pod is on no node's list
			out = append(out, store.PodStatus{State: store.PodAssumed, Pod: pod})
		}
	}
	slices.SortFunc(out, func(a, b store.PodStatus) int { // by namespace/name, as the snapshot
		return cmp.Or(cmp.Compare(a.Pod.Namespace, b.Pod.Namespace), cmp.Compare(a.Pod.Name, b.Pod.Name))
	})
	return out
}

// NodeInfo returns a node's info in the fork: the snapshot's, charged and released for the
// pods the fork moved to and from it as the cache charges them.
func (f *Fork) NodeInfo(name string) (*store.NodeInfo, bool) {
	base, ok := f.snap.NodeInfo(name)
	d := f.state.deltaOf(name)
	if !ok || d == nil {
		return base, ok
	}
	if d.removed {
		return nil, false
	}
	return f.view(base, d), true
}

// NodeInfos returns the info of every node the fork holds, in no particular order.
func (f *Fork) NodeInfos() []*store.NodeInfo {
	out := f.snap.NodeInfos()
	if len(f.state.nodes) == 0 {
		return out
	}
	out = slices.DeleteFunc(out, func(n *store.NodeInfo) bool { return f.state.removed(n.Name) })
	for i, n := range out {
		if d := f.state.deltaOf(n.Name); d != nil {
			out[i] = f.view(n, d)
		}
	}
	return out
}

// view returns the node of d as the fork reads it: base with d's charge, without the pods
// d took off and with those it placed (as the node store, a finished pod holds nothing on
// its node). Made once per change of the node; a view is never changed after.
func (f *Fork) view(base *store.NodeInfo, d *nodeDelta) *store.NodeInfo {
	if d.view != nil {
		return d.view
	}
	info := &f.views.take(1)[0]
	*info = *base
	// A generation of its own (negative: the cache's count up from 0), so that what is
	// remembered by a node's generation is never taken for the snapshot's node.
	info.Generation = forkGenerations.Add(-1)
	info.Requested = sum(base.Requested, d.charge.requested)
	info.BestEffortRequested = sum(base.BestEffortRequested, d.charge.bestEffort)
	info.DRARequested = sum(base.DRARequested, d.charge.dra)
	info.Pods = f.podLists.take(len(base.Pods) + len(d.added))[:0]
	for _, p := range base.Pods {
		if !slices.Contains(d.gone, p) {
			info.Pods = append(info.Pods, p)
		}
	}
	for _, p := range d.added {
		if !store.IsTerminal(p) {
			info.Pods = append(info.Pods, p)
		}
	}
	d.view = info
	return info
}

// forkGenerations numbers the nodes forks changed.
var forkGenerations atomic.Int64

// sum returns a+b, sharing a's scalars when b adds none.
func sum(a, b store.Resources) store.Resources {
	if len(b.Scalar) > 0 {
		a = a.Clone()
	}
	a.Add(b)
	return a
}

// PodGroup returns one pod group in the fork: its counts and members without the pods the
// fork removed and with those it added.
func (f *Fork) PodGroup(key types.NamespacedName) (store.PodGroup, bool) {
	g, ok := f.snap.PodGroup(key)
	if len(f.state.pods) == 0 {
		return g, ok
	}
	if !ok { // no object and no member in the snapshot: the fork's members may make one
		g = store.PodGroup{Key: key}
		g.Source, _ = PodGroupSourceOf(key)
	}
	g.Members = slices.Clone(g.Members)
	for k, change := range f.state.pods {
		if base, ok := f.snap.PodState(k); ok && slices.Contains(PodGroupKeysOf(base.Pod), key) {
			g.Counts.Add(base.Pod, -1)
			g.Members = slices.DeleteFunc(g.Members, func(m types.NamespacedName) bool { return m == k })
		}
		if pod := change.pod; pod != nil && slices.Contains(PodGroupKeysOf(pod), key) {
			g.Counts.Add(pod, +1)
			g.Members = append(g.Members, k)
		}
	}
	if g.PodGroup == nil && g.Counts.Total() == 0 {
		return store.PodGroup{}, false // as the cache: a group of no object lives by its members
	}
	if g.PodGroup != nil {
		g.MinMemberReached = g.Counts.Placed() >= g.MinMember()
	}
	return g, true
}

// PodGroupsForPod returns the groups the pod is a member of, as the fork counts them.
func (f *Fork) PodGroupsForPod(pod *corev1.Pod) []store.PodGroup {
	var out []store.PodGroup
	for _, k := range PodGroupKeysOf(pod) {
		if g, ok := f.PodGroup(k); ok {
			out = append(out, g)
		}
	}
	return out
}

// PDBsForPod returns the budgets that cover a pod, each allowing one disruption less for
// every pod of the snapshot it covers that the fork removed or moved.
func (f *Fork) PDBsForPod(pod *corev1.Pod) []store.PDB {
	pdbs := f.snap.PDBsForPod(pod)
	for i := range pdbs {
		pdbs[i].AllowedDisruptions -= f.state.disrupted[pdbs[i].Key]
	}
	return pdbs
}
