package nodestore

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// chargePod adds a pod (or placeholder) with requests req to a NodeInfo.
func chargePod(info *stores.NodeInfo, pod *corev1.Pod, req stores.Resources) {
	switch {
	case isPlaceholder(pod):
		info.Placeholders = append(info.Placeholders, pod)
		info.Requested.Add(req)
		info.Reserved.Add(req)
	case stores.IsBestEffort(pod):
		info.Pods = append(info.Pods, pod)
		info.BestEffortRequested.Add(req)
	default:
		info.Pods = append(info.Pods, pod)
		info.Requested.Add(req)
	}
}

// unchargePod removes what chargePod added and returns the object the node held for pod
// (nil when it held none).
func unchargePod(info *stores.NodeInfo, pod *corev1.Pod, req stores.Resources) *corev1.Pod {
	switch {
	case isPlaceholder(pod):
		stored := removePod(&info.Placeholders, pod)
		if stored != nil {
			info.Requested.Sub(req)
			info.Reserved.Sub(req)
		}
		return stored
	case stores.IsBestEffort(pod):
		stored := removePod(&info.Pods, pod)
		if stored != nil {
			info.BestEffortRequested.Sub(req)
		}
		return stored
	default:
		stored := removePod(&info.Pods, pod)
		if stored != nil {
			info.Requested.Sub(req)
		}
		return stored
	}
}

// replacePod swaps the object of a pod whose charge does not change and returns the object
// it replaced (nil when the node held none).
func replacePod(info *stores.NodeInfo, oldPod, newPod *corev1.Pod) *corev1.Pod {
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
	_, ok := stores.PlaceholderOf(pod)
	return ok
}
