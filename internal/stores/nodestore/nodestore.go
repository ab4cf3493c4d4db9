// Package nodestore keeps one NodeInfo per node, merged from the Node, its NMNode and its
// CustomNodeResource, and charged with the pods and reservation placeholders on it.
package nodestore

import (
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Store is the NodeStore.
type Store struct {
	h     *stores.CacheHandler
	nodes *store.Versioned[string, *store.NodeInfo]
	// charges holds what each pod (or placeholder) in a node's lists was charged, keyed by
	// the very object the list holds. Pods are immutable, so their requests are computed
	// once per version, as kube-scheduler does (PodInfo caches them): an update computes
	// only the new version's, a delete none. Entries live exactly as long as the list entry.
	charges map[*corev1.Pod]store.Resources
	// checks counts invariant checks, to rotate which pods' charges one recomputes. Checks
	// run under the handler's read lock, possibly several at once.
	checks atomic.Uint64
	// acct is how pods are charged (the feature gates the flags mirror); requests computes
	// it once per distinct set of inputs (requestsmemo.go).
	acct     store.Accounting
	requests *requestsMemo
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.PodHandler    = (*Store)(nil)
	_ store.NodeHandler   = (*Store)(nil)
	_ store.NMNodeHandler = (*Store)(nil)
	_ store.CNRHandler    = (*Store)(nil)
)

// New returns an empty NodeStore and wires CacheHandler.GetNodeInfo to it.
func New(h *stores.CacheHandler) *Store {
	s := &Store{
		h: h, nodes: store.NewVersioned[string, *store.NodeInfo](h.Generations()),
		charges: map[*corev1.Pod]store.Resources{}, acct: h.Accounting(),
		requests: newRequestsMemo(h.Accounting()),
	}
	h.SetNodeHandler(s.Get)
	h.SetExtendedResourcesChangedFunc(s.extendedResourcesChanged)
	return s
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.NodeStoreName }

// Len implements stores.Store.
func (s *Store) Len() int { return s.nodes.Len() }

// Get returns the live NodeInfo of a node; callers hold the handler lock and must not
// modify it.
func (s *Store) Get(name string) (*store.NodeInfo, bool) { return s.nodes.Get(name) }

// Range calls fn for every NodeInfo until it returns false.
func (s *Store) Range(fn func(*store.NodeInfo) bool) {
	s.nodes.Range(func(_ string, info *store.NodeInfo) bool { return fn(info) })
}

// AddPod charges a bound, non-terminal pod (or a reservation placeholder) to its node.
func (s *Store) AddPod(pod *corev1.Pod) {
	if !charged(pod) {
		return
	}
	info := s.getOrCreate(pod.Spec.NodeName)
	req := s.requests.podRequests(pod)
	s.chargePod(info, pod, req)
	s.charges[pod] = req
	s.changed(info)
}

// UpdatePod moves the charge of a pod from its old to its new state.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	wasCharged, isCharged := charged(oldPod), charged(newPod)
	if wasCharged && isCharged && oldPod.Spec.NodeName == newPod.Spec.NodeName {
		// The common case: the pod stays on its node; only its object (and maybe its
		// requests, after an in-place resize) changes.
		info, ok := s.nodes.Get(newPod.Spec.NodeName)
		if !ok {
			s.AddPod(newPod)
			return
		}
		oldReq, newReq := s.chargeOf(info, oldPod), s.requests.podRequests(newPod)
		if oldReq.Equal(newReq) && store.IsBestEffort(oldPod) == store.IsBestEffort(newPod) {
			if stored := replacePod(info, oldPod, newPod); stored != nil {
				delete(s.charges, stored)
				s.charges[newPod] = newReq
			}
		} else {
			if stored := s.unchargePod(info, oldPod, oldReq); stored != nil {
				delete(s.charges, stored)
			}
			s.chargePod(info, newPod, newReq)
			s.charges[newPod] = newReq
		}
		s.changed(info)
		return
	}
	if wasCharged {
		s.DeletePod(oldPod)
	}
	if isCharged {
		s.AddPod(newPod)
	}
}

// DeletePod releases a pod's charge; the NodeInfo goes when nothing refers to it any more.
func (s *Store) DeletePod(pod *corev1.Pod) {
	if !charged(pod) {
		return
	}
	info, ok := s.nodes.Get(pod.Spec.NodeName)
	if !ok {
		return
	}
	if stored := s.unchargePod(info, pod, s.chargeOf(info, pod)); stored != nil {
		delete(s.charges, stored)
	}
	s.changedOrGone(info)
}

// chargeOf returns what info was charged for pod: the charge remembered for the object it
// holds, so that a release takes back exactly what was added. The handler hands back that
// very object, so the pointer lookup nearly always answers.
func (s *Store) chargeOf(info *store.NodeInfo, pod *corev1.Pod) store.Resources {
	if req, ok := s.charges[pod]; ok {
		return req
	}
	list := info.Pods
	if isPlaceholder(pod) {
		list = info.Placeholders
	}
	if i := indexOf(list, pod); i >= 0 {
		if req, ok := s.charges[list[i]]; ok {
			return req
		}
	}
	return s.requests.podRequests(pod)
}

// AddNode sets the Node of a NodeInfo.
func (s *Store) AddNode(node *corev1.Node) {
	s.setSource(node.Name, func(info *store.NodeInfo) { info.Node = node })
}

// UpdateNode replaces the Node of a NodeInfo.
func (s *Store) UpdateNode(_, node *corev1.Node) { s.AddNode(node) }

// DeleteNode removes the Node; the NodeInfo stays while another source or a pod refers to it.
func (s *Store) DeleteNode(node *corev1.Node) {
	s.clearSource(node.Name, func(info *store.NodeInfo) { info.Node = nil })
}

// AddNMNode sets the NMNode of a NodeInfo.
func (s *Store) AddNMNode(nm *v1alpha1.NMNode) {
	s.setSource(nm.Name, func(info *store.NodeInfo) { info.NMNode = nm })
}

// UpdateNMNode replaces the NMNode of a NodeInfo.
func (s *Store) UpdateNMNode(_, nm *v1alpha1.NMNode) { s.AddNMNode(nm) }

// DeleteNMNode removes the NMNode of a NodeInfo.
func (s *Store) DeleteNMNode(nm *v1alpha1.NMNode) {
	s.clearSource(nm.Name, func(info *store.NodeInfo) { info.NMNode = nil })
}

// AddCNR sets the CustomNodeResource of a NodeInfo.
func (s *Store) AddCNR(cnr *v1alpha1.CustomNodeResource) {
	s.setSource(cnr.Name, func(info *store.NodeInfo) { info.CNR = cnr })
}

// UpdateCNR replaces the CustomNodeResource of a NodeInfo.
func (s *Store) UpdateCNR(_, cnr *v1alpha1.CustomNodeResource) { s.AddCNR(cnr) }

// DeleteCNR removes the CustomNodeResource of a NodeInfo.
func (s *Store) DeleteCNR(cnr *v1alpha1.CustomNodeResource) {
	s.clearSource(cnr.Name, func(info *store.NodeInfo) { info.CNR = nil })
}

// setSource sets one source of a node's NodeInfo (creating it) and recomputes its pools.
func (s *Store) setSource(name string, set func(*store.NodeInfo)) {
	info := s.getOrCreate(name)
	set(info)
	s.refreshAllocatable(info)
}

// clearSource clears one source of a node's NodeInfo and recomputes its pools; the NodeInfo
// goes when nothing refers to it any more.
func (s *Store) clearSource(name string, clear func(*store.NodeInfo)) {
	if info, ok := s.nodes.Get(name); ok {
		clear(info)
		s.refreshAllocatable(info)
	}
}

func (s *Store) getOrCreate(name string) *store.NodeInfo {
	if info, ok := s.nodes.Get(name); ok {
		return info
	}
	info := &store.NodeInfo{Name: name}
	s.nodes.Set(name, info)
	return info
}

// refreshAllocatable recomputes the pools from the sources after one of them changed.
func (s *Store) refreshAllocatable(info *store.NodeInfo) {
	held := holdsScalar(info)
	var listed map[corev1.ResourceName]bool
	if held {
		listed = listedScalars(info.Allocatable)
	}
	info.Allocatable, info.Capacity, info.BestEffortAllocatable = MergedPools(info.Node, info.NMNode, info.CNR)
	if held && !sameNames(listed, listedScalars(info.Allocatable)) {
		// Which extended resources DRA serves here may have changed (extended.go).
		s.resplit(info)
	}
	s.changedOrGone(info)
}

// changed records a change of info for snapshots.
func (s *Store) changed(info *store.NodeInfo) {
	info.Generation = s.nodes.Touch(info.Name)
}

// changedOrGone records a change, or removes info when nothing refers to it any more.
func (s *Store) changedOrGone(info *store.NodeInfo) {
	if info.Node == nil && info.NMNode == nil && info.CNR == nil && len(info.Pods) == 0 && len(info.Placeholders) == 0 {
		s.nodes.Delete(info.Name)
		return
	}
	s.changed(info)
}

// charged reports whether a pod is charged to a node: it is bound or assumed there and has
// not finished.
func charged(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && !store.IsTerminal(pod)
}

// MergedPools applies the merge rule: the guaranteed allocatable and capacity from the Node
// and the NMNode, and the best-effort allocatable from the CNR. Any source may be nil.
func MergedPools(node *corev1.Node, nm *v1alpha1.NMNode, cnr *v1alpha1.CustomNodeResource) (allocatable, capacity, bestEffort store.Resources) {
	switch {
	case node != nil:
		allocatable = store.ResourcesFromList(node.Status.Allocatable)
		capacity = store.ResourcesFromList(node.Status.Capacity)
		if nm != nil {
			// What the node manager keeps back for itself; it cannot give back more than it has.
			keptBack := store.ResourcesFromList(nm.Status.ResourceCapacity)
			keptBack.Sub(store.ResourcesFromList(nm.Status.ResourceAllocatable))
			keptBack.FloorAtZero()
			allocatable.Sub(keptBack)
			allocatable.FloorAtZero()
		}
	case nm != nil:
		allocatable = store.ResourcesFromList(nm.Status.ResourceAllocatable)
		capacity = store.ResourcesFromList(nm.Status.ResourceCapacity)
	}
	if cnr != nil {
		bestEffort = store.ResourcesFromList(cnr.Status.Resources.Allocatable)
	}
	return allocatable, capacity, bestEffort
}
