package nodestore

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Extended resources served by DRA (DRAExtendedResource, GA in v1.37). A pod asking for
// example.com/gpu on a node whose allocatable lists none of it, where a DeviceClass names
// example.com/gpu, is given devices of that class by kube-scheduler through a claim it
// makes for the pod (pod.status.extendedResourceClaimStatus); the DeviceStore counts that
// claim's devices like any claim's. So the node charges that part of the pod's requests to
// DRARequested, not to Requested: it is not a request against the node's allocatable, and
// the node is not over-committed by it. Where the node lists the resource, its device
// plugin serves it and the request is charged as before, even if a class names it too
// (kube-scheduler's rule: the node's allocatable decides).
//
// The decision is per node and resource name, so every pod of a node splits its requests
// alike; when it may change (the node's allocatable gains or loses an extended resource, a
// DeviceClass event touches the resource's entry in the map) the node's sums are recomputed
// from the charges it remembers (resplit), so that a release always takes back what was
// added.

// draServed reports whether DRA devices serve a node's requests for a resource: the node's
// allocatable lists none of it and a DeviceClass serves it (NodeResourcesFit's
// shouldDelegateResourceToDRA).
func (s *Store) draServed(info *store.NodeInfo, name corev1.ResourceName) bool {
	if info.Allocatable.Scalar[name] > 0 {
		return false
	}
	_, ok := s.h.ExtendedResourceClass(name)
	return ok
}

// split divides a pod's requests into what is charged to the node's allocatable and what
// DRA devices serve (served decides, per resource name). Without such a resource it
// returns req itself and a zero dra, allocating nothing.
func split(req store.Resources, served func(corev1.ResourceName) bool) (node, dra store.Resources) {
	if len(req.Scalar) == 0 {
		return req, store.Resources{}
	}
	for name, v := range req.Scalar {
		if served(name) {
			if dra.Scalar == nil {
				dra.Scalar = make(map[corev1.ResourceName]int64, 1)
			}
			dra.Scalar[name] = v
		}
	}
	if dra.Scalar == nil {
		return req, dra
	}
	node = req.Clone()
	for name := range dra.Scalar {
		delete(node.Scalar, name)
	}
	if len(node.Scalar) == 0 {
		node.Scalar = nil
	}
	return node, dra
}

// splitOn is split with the node's current decision.
func (s *Store) splitOn(info *store.NodeInfo, req store.Resources) (node, dra store.Resources) {
	if len(req.Scalar) == 0 {
		return req, store.Resources{} // most pods: nothing to decide, no closure
	}
	return split(req, func(name corev1.ResourceName) bool { return s.draServed(info, name) })
}

// holdsScalar reports whether some pod or placeholder of the node requests a resource other
// than cpu, memory, ephemeral storage and pods: only those can be DRA's.
func holdsScalar(info *store.NodeInfo) bool {
	return len(info.Requested.Scalar) > 0 || len(info.BestEffortRequested.Scalar) > 0 || len(info.DRARequested.Scalar) > 0
}

// holdsAny reports whether some pod or placeholder of the node requests one of names.
func holdsAny(info *store.NodeInfo, names []corev1.ResourceName) bool {
	if !holdsScalar(info) {
		return false
	}
	for _, name := range names {
		if info.Requested.Scalar[name] != 0 || info.BestEffortRequested.Scalar[name] != 0 || info.DRARequested.Scalar[name] != 0 {
			return true
		}
	}
	return false
}

// resplit recomputes a node's sums from the charges it remembers, with the current
// decision of which resources DRA serves.
func (s *Store) resplit(info *store.NodeInfo) {
	info.Requested, info.BestEffortRequested, info.Reserved, info.DRARequested = store.Resources{}, store.Resources{}, store.Resources{}, store.Resources{}
	for _, list := range [][]*corev1.Pod{info.Pods, info.Placeholders} {
		for _, p := range list {
			node, dra := s.splitOn(info, s.charges[p])
			addCharge(info, p, node, dra)
		}
	}
}

// extendedResourcesChanged recomputes the sums of every node holding a request for one of
// these resources, after a DeviceClass event may have changed whether DRA serves them.
func (s *Store) extendedResourcesChanged(names []corev1.ResourceName) {
	var held []*store.NodeInfo
	s.nodes.Range(func(_ string, info *store.NodeInfo) bool {
		if holdsAny(info, names) {
			held = append(held, info)
		}
		return true
	})
	// Marking a node changed reorders the list Range walks: mark them after the walk.
	for _, info := range held {
		s.resplit(info)
		s.changed(info)
	}
}

// listedScalars returns the extended resources (and other scalar ones) an allocatable
// lists with a positive amount.
func listedScalars(r store.Resources) map[corev1.ResourceName]bool {
	var out map[corev1.ResourceName]bool
	for name, v := range r.Scalar {
		if v > 0 {
			if out == nil {
				out = map[corev1.ResourceName]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// sameNames reports whether two sets of names are equal.
func sameNames(a, b map[corev1.ResourceName]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for name := range a {
		if !b[name] {
			return false
		}
	}
	return true
}

// checkExtendedClaim reports a pod bound to the node whose requests DRA serves there but
// that has no extended-resource claim (pod.status.extendedResourceClaimStatus): kube-scheduler
// records it before it binds such a pod, so the pod was bound by something that did not
// have DRA allocate it devices, and no device is charged for those requests. An assumed pod
// is not checked: its scheduler records the claim before it binds.
func (s *Store) checkExtendedClaim(node string, pod *corev1.Pod, charge store.Resources, served map[corev1.ResourceName]bool) error {
	if len(charge.Scalar) == 0 || pod.Status.ExtendedResourceClaimStatus != nil {
		return nil
	}
	var names []string
	for name := range charge.Scalar {
		if served[name] {
			names = append(names, string(name))
		}
	}
	if len(names) == 0 {
		return nil
	}
	if st, ok := s.h.GetPodState(store.PodKey(pod)); ok && st.State == store.PodAssumed {
		return nil
	}
	slices.Sort(names)
	return fmt.Errorf("node %s: pod %s asks for %s, which DRA devices serve there (the node's allocatable lists none of it and a DeviceClass names it), "+
		"but has no extended-resource claim (pod.status.extendedResourceClaimStatus), so no device is charged for it: "+
		"whatever bound it did not have DRA allocate it a claim, as kube-scheduler's DynamicResources plugin does", node, store.PodKey(pod), strings.Join(names, ", "))
}
