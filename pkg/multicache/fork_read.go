package multicache

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodState returns a pod's state in the fork: the snapshot's, or store.PodAssumed on its
// node for a pod the fork added; false for a pod the fork removed.
func (f *Fork) PodState(key types.NamespacedName) (store.PodStatus, bool) {
	if pod, changed := f.state.pods[key]; changed {
		if pod == nil {
			return store.PodStatus{}, false
		}
		return store.PodStatus{State: store.PodAssumed, Pod: pod}, true
	}
	return f.snap.PodState(key)
}

// PodsOnNode returns the pods charged to a node in the fork, with their state; nil for a
// node the fork does not hold.
func (f *Fork) PodsOnNode(node string) []store.PodStatus {
	if f.state.removedNodes[node] {
		return nil
	}
	base := f.snap.PodsOnNode(node)
	touched := f.state.byNode[node]
	if len(touched) == 0 {
		return base
	}
	out := make([]store.PodStatus, 0, len(base)+len(touched))
	for _, ps := range base {
		if !f.state.has(store.PodKey(ps.Pod)) {
			out = append(out, ps)
		}
	}
	for _, key := range touched {
		if pod := f.state.pods[key]; pod != nil && pod.Spec.NodeName == node {
			out = append(out, store.PodStatus{State: store.PodAssumed, Pod: pod})
		}
	}
	return out
}

// NodeInfo returns a node's info in the fork: the snapshot's, charged and released for the
// pods the fork moved to and from it as the cache charges them.
func (f *Fork) NodeInfo(name string) (*store.NodeInfo, bool) {
	if f.state.removedNodes[name] {
		return nil, false
	}
	base, ok := f.snap.NodeInfo(name)
	if !ok || len(f.state.byNode[name]) == 0 {
		return base, ok
	}
	return f.recharge(base), true
}

// NodeInfos returns the info of every node the fork holds, in no particular order.
func (f *Fork) NodeInfos() []*store.NodeInfo {
	out := f.snap.NodeInfos()
	if len(f.state.byNode) == 0 && len(f.state.removedNodes) == 0 {
		return out
	}
	out = slices.DeleteFunc(out, func(n *store.NodeInfo) bool { return f.state.removedNodes[n.Name] })
	for i, n := range out {
		if len(f.state.byNode[n.Name]) > 0 {
			out[i] = f.recharge(n)
		}
	}
	return out
}

// recharge copies base with the fork's charges and its pods moved from and to it.
func (f *Fork) recharge(base *store.NodeInfo) *store.NodeInfo {
	info := *base
	if ch := f.state.charged[base.Name]; ch != nil {
		info.Requested, info.BestEffortRequested, info.DRARequested = base.Requested.Clone(), base.BestEffortRequested.Clone(), base.DRARequested.Clone()
		info.Requested.Add(ch.requested)
		info.BestEffortRequested.Add(ch.bestEffort)
		info.DRARequested.Add(ch.dra)
	}
	touched := f.state.byNode[base.Name]
	info.Pods = make([]*corev1.Pod, 0, len(base.Pods)+len(touched))
	for _, p := range base.Pods {
		if !f.state.has(store.PodKey(p)) {
			info.Pods = append(info.Pods, p)
		}
	}
	for _, key := range touched {
		// As the node store: a finished pod holds nothing on its node.
		if pod := f.state.pods[key]; pod != nil && pod.Spec.NodeName == base.Name && !store.IsTerminal(pod) {
			info.Pods = append(info.Pods, pod)
		}
	}
	return &info
}

// nodeCharge is what a fork changed of a node's charge.
type nodeCharge struct{ requested, bestEffort, dra store.Resources }

func (c *nodeCharge) clone() *nodeCharge {
	return &nodeCharge{requested: c.requested.Clone(), bestEffort: c.bestEffort.Clone(), dra: c.dra.Clone()}
}

// charge adds (sign +1) or takes off (-1) a pod's requests on its node (pod, made from source
// with at most its node changed) as the node store
// charges them, once per change: kube-scheduler's requests (the snapshot's Accounting), to
// the best-effort pool for a best-effort pod, and an extended resource the node's
// allocatable does not list to DRARequested (DRA devices serve it there, or the pod does not
// fit at all). A finished pod holds nothing.
func (f *Fork) charge(pod, source *corev1.Pod, sign int) {
	node, ok := f.snap.NodeInfo(pod.Spec.NodeName)
	if !ok || store.IsTerminal(pod) {
		return
	}
	req, known := f.requests[source]
	if !known {
		// A move computes a pod's requests once: its removal and its addition charge the
		// same object (pods are never changed), so the second is remembered.
		req = f.snap.acct.PodRequests(pod)
		f.requests[source] = req
	}
	req.Scalar = maps.Clone(req.Scalar)
	var dra store.Resources
	for name, v := range req.Scalar {
		if _, listed := node.Allocatable.Scalar[name]; !listed {
			if dra.Scalar == nil {
				dra.Scalar = map[corev1.ResourceName]int64{}
			}
			dra.Scalar[name] = v
			delete(req.Scalar, name)
		}
	}
	ch := f.state.charged[node.Name]
	if ch == nil {
		ch = &nodeCharge{}
		f.state.charged[node.Name] = ch
	}
	pool := &ch.requested
	if store.IsBestEffort(pod) {
		pool = &ch.bestEffort
	}
	if sign > 0 {
		pool.Add(req)
		ch.dra.Add(dra)
	} else {
		pool.Sub(req)
		ch.dra.Sub(dra)
	}
}

// PodGroup returns one pod group in the fork: its counts and members without the pods the
// fork removed and with those it added.
func (f *Fork) PodGroup(key types.NamespacedName) (PodGroup, bool) {
	g, ok := f.snap.PodGroup(key)
	if !ok || len(f.state.pods) == 0 {
		return g, ok
	}
	g.Members = slices.Clone(g.Members)
	for k, pod := range f.state.pods {
		if base, ok := f.snap.PodState(k); ok && slices.Contains(PodGroupKeysOf(base.Pod), key) {
			g.Counts = recount(g.Counts, base.Pod, -1)
			g.Members = slices.DeleteFunc(g.Members, func(m types.NamespacedName) bool { return m == k })
		}
		if pod != nil && slices.Contains(PodGroupKeysOf(pod), key) {
			g.Counts = recount(g.Counts, pod, +1)
			g.Members = append(g.Members, k)
		}
	}
	if g.PodGroup != nil {
		g.MinMemberReached = g.Counts.Placed() >= g.MinMember()
	}
	return g, true
}

// PodGroupsForPod returns the groups the pod is a member of, as the fork counts them.
func (f *Fork) PodGroupsForPod(pod *corev1.Pod) []PodGroup {
	var out []PodGroup
	for _, k := range PodGroupKeysOf(pod) {
		if g, ok := f.PodGroup(k); ok {
			out = append(out, g)
		}
	}
	return out
}

// PDBsForPod returns the budgets that cover a pod, each allowing one disruption less for
// every pod of the snapshot it covers that the fork removed or moved.
func (f *Fork) PDBsForPod(pod *corev1.Pod) []PDB {
	pdbs := f.snap.PDBsForPod(pod)
	for i := range pdbs {
		pdbs[i].AllowedDisruptions -= f.state.disrupted[pdbs[i].Key]
	}
	return pdbs
}

// recount counts pod in c (delta +1) or takes it out (-1), as the pod group store counts.
func recount(c PodGroupCounts, pod *corev1.Pod, delta int32) PodGroupCounts {
	counts := podgroupstore.Counts(c)
	counts.Add(pod, delta)
	return PodGroupCounts(counts)
}
