package nodestore

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// chargePod adds a pod (or placeholder) to a NodeInfo: req is what it was charged; the part
// of it DRA devices serve (extended.go) goes to DRARequested, the rest to its pool.
func (s *Store) chargePod(info *store.NodeInfo, pod *corev1.Pod, req store.Resources) {
	if isPlaceholder(pod) {
		info.Placeholders = append(info.Placeholders, pod)
	} else {
		info.Pods = append(info.Pods, pod)
	}
	node, dra := s.splitOn(info, req)
	addCharge(info, pod, node, dra)
}

// addCharge adds the node's and DRA's parts of a pod's charge to the node's sums.
func addCharge(info *store.NodeInfo, pod *corev1.Pod, node, dra store.Resources) {
	info.DRARequested.Add(dra)
	switch {
	case isPlaceholder(pod):
		info.Requested.Add(node)
		info.Reserved.Add(node)
	case store.IsBestEffort(pod):
		info.BestEffortRequested.Add(node)
	default:
		info.Requested.Add(node)
	}
}

// unchargePod removes what chargePod added for req and returns the object the node held for
// pod (nil when it held none).
func (s *Store) unchargePod(info *store.NodeInfo, pod *corev1.Pod, req store.Resources) *corev1.Pod {
	list := &info.Pods
	if isPlaceholder(pod) {
		list = &info.Placeholders
	}
	stored := removePod(list, pod)
	if stored == nil {
		return nil
	}
	node, dra := s.splitOn(info, req)
	info.DRARequested.Sub(dra)
	switch {
	case isPlaceholder(pod):
		info.Requested.Sub(node)
		info.Reserved.Sub(node)
	case store.IsBestEffort(pod):
		info.BestEffortRequested.Sub(node)
	default:
		info.Requested.Sub(node)
	}
	return stored
}

// replacePod swaps the object of a pod whose charge does not change and returns the object
// it replaced (nil when the node held none).
func replacePod(info *store.NodeInfo, oldPod, newPod *corev1.Pod) *corev1.Pod {
	list := info.Pods
	if isPlaceholder(oldPod) {
		list = info.Placeholders
	}
	if i := indexOf(list, oldPod); i >= 0 {
		stored := list[i]
		list[i] = newPod
		return stored
	}
	return nil
}

// removePod removes pod from *list (order is not kept) and returns the object removed (nil
// when it was not there).
func removePod(list *[]*corev1.Pod, pod *corev1.Pod) *corev1.Pod {
	i := indexOf(*list, pod)
	if i < 0 {
		return nil
	}
	l := *list
	stored := l[i]
	last := len(l) - 1
	l[i] = l[last]
	l[last] = nil
	*list = l[:last]
	return stored
}

// indexOf finds a pod in a node's list. A node holds tens of pods, so a scan is cheaper
// than keeping an index per node. The handler hands back the very object the node holds, so
// pointers are compared first: that scan touches no pod object (reading each pod's name
// would cost a cache miss per pod); the name comparison is the fallback.
func indexOf(list []*corev1.Pod, pod *corev1.Pod) int {
	for i, p := range list {
		if p == pod {
			return i
		}
	}
	for i, p := range list {
		if p.Name == pod.Name && p.Namespace == pod.Namespace {
			return i
		}
	}
	return -1
}

func isPlaceholder(pod *corev1.Pod) bool {
	_, ok := store.PlaceholderOf(pod)
	return ok
}
