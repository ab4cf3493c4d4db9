package store

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// NodeInfo is everything the cache knows about one node, merged from its Node, NMNode and
// CustomNodeResource and from the pods and reservation placeholders charged to it.
//
// Merge rule for the guaranteed pool: Node only -> the Node's allocatable; NMNode only -> the
// NMNode's allocatable; both -> the Node's allocatable minus what the node manager keeps back
// (NMNode capacity minus NMNode allocatable), floored at zero. The CNR's allocatable is the
// best-effort pool. A NodeInfo lives while any of its sources or a pod refers to it.
//
// The NodeStore owns NodeInfos; readers and snapshots get clones.
type NodeInfo struct {
	// Name of the node.
	Name string
	// Node, NMNode and CNR are the sources, nil when absent. They are shared, read-only.
	Node   *corev1.Node
	NMNode *v1alpha1.NMNode
	CNR    *v1alpha1.CustomNodeResource

	// Allocatable and Capacity are the guaranteed pool by the merge rule.
	Allocatable Resources
	Capacity    Resources
	// BestEffortAllocatable is the reclaimed pool the CNR reports.
	BestEffortAllocatable Resources

	// Requested is what guaranteed pods and reservation placeholders request.
	Requested Resources
	// BestEffortRequested is what best-effort pods request.
	BestEffortRequested Resources
	// Reserved is the part of Requested held by reservation placeholders.
	Reserved Resources
	// DRARequested is what the node's pods and placeholders request of extended resources
	// that DRA devices serve here (DRAExtendedResource): the node's allocatable lists none
	// of the resource and a DeviceClass names it (spec.extendedResourceName, or the implicit
	// deviceclass.resource.kubernetes.io/<class>), as kube-scheduler's NodeResourcesFit
	// decides. Those requests are charged to the class's devices, through the claim
	// kube-scheduler makes for each pod (pod.status.extendedResourceClaimStatus), so they are
	// in neither Requested nor BestEffortRequested (a placeholder's are here too, not in
	// Reserved). Requested + BestEffortRequested + DRARequested is the sum of every pod's and
	// placeholder's requests, what kube-scheduler's NodeInfo counts for the pods.
	DRARequested Resources

	// Pods are the non-terminal pods bound or assumed to the node (shared, read-only).
	Pods []*corev1.Pod
	// Placeholders are the synthetic pods of the reservations charged on the node (see
	// NewPlaceholderPod).
	Placeholders []*corev1.Pod

	// Generation is the handler generation of the node's last change.
	Generation int64
}

// Free returns the guaranteed resources not yet requested (negative when over-committed).
func (n *NodeInfo) Free() Resources {
	free := n.Allocatable.Clone()
	free.Sub(n.Requested)
	return free
}

// BestEffortFree returns the best-effort resources not yet requested.
func (n *NodeInfo) BestEffortFree() Resources {
	free := n.BestEffortAllocatable.Clone()
	free.Sub(n.BestEffortRequested)
	return free
}

// Labels returns the labels of the node: the Node's, else the NMNode's, else the CNR's.
func (n *NodeInfo) Labels() map[string]string {
	switch {
	case n.Node != nil:
		return n.Node.Labels
	case n.NMNode != nil:
		return n.NMNode.Labels
	case n.CNR != nil:
		return n.CNR.Labels
	}
	return nil
}

// Clone returns a copy that can be read while the original keeps changing. Source objects
// and pods are shared: the cache never mutates them.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{}
	n.CopyInto(c)
	return c
}

// CopyInto makes dst a copy of n like Clone, reusing dst's slices: a snapshot refreshes its
// NodeInfos in place, so pointers its readers hold stay valid and little is allocated.
func (n *NodeInfo) CopyInto(dst *NodeInfo) {
	pods, placeholders := dst.Pods[:0], dst.Placeholders[:0]
	*dst = *n
	dst.Allocatable = n.Allocatable.Clone()
	dst.Capacity = n.Capacity.Clone()
	dst.BestEffortAllocatable = n.BestEffortAllocatable.Clone()
	dst.Requested = n.Requested.Clone()
	dst.BestEffortRequested = n.BestEffortRequested.Clone()
	dst.Reserved = n.Reserved.Clone()
	dst.DRARequested = n.DRARequested.Clone()
	dst.Pods = append(pods, n.Pods...)
	dst.Placeholders = append(placeholders, n.Placeholders...)
	// Drop references to pods that left, so that the snapshot does not keep them alive.
	clear(dst.Pods[len(dst.Pods):cap(dst.Pods)])
	clear(dst.Placeholders[len(dst.Placeholders):cap(dst.Placeholders)])
}
