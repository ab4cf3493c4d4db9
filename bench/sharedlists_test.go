package bench

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// sharedLists makes pods list the very ResourceList of a given content, as the operator's
// podTransform does with the informer's pods (internal/operator, unexported there): the
// differential tests feed multicache pods shaped as the cache holds them, so that what the
// NodeStore computes once per distinct set of lists (its requests memo) is compared with
// kube-scheduler on pods that share them.
type sharedLists map[string]corev1.ResourceList

// sharePod replaces every resource list of pod (containers', the pod's, the statuses') with
// the shared one of the same content.
func (t sharedLists) sharePod(pod *corev1.Pod) *corev1.Pod {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			t.shareRequirements(&cs[i].Resources)
		}
	}
	if r := pod.Spec.Resources; r != nil {
		t.shareRequirements(r)
	}
	pod.Spec.Overhead = t.share(pod.Spec.Overhead)
	for _, ss := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range ss {
			ss[i].AllocatedResources = t.share(ss[i].AllocatedResources)
			if r := ss[i].Resources; r != nil {
				t.shareRequirements(r)
			}
		}
	}
	pod.Status.AllocatedResources = t.share(pod.Status.AllocatedResources)
	if r := pod.Status.Resources; r != nil {
		t.shareRequirements(r)
	}
	return pod
}

func (t sharedLists) shareRequirements(r *corev1.ResourceRequirements) {
	r.Requests, r.Limits = t.share(r.Requests), t.share(r.Limits)
}

func (t sharedLists) share(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return rl
	}
	names := make([]string, 0, len(rl))
	for n := range rl {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		q := rl[corev1.ResourceName(n)]
		b.WriteString(n + "=" + q.String() + ";")
	}
	if shared, ok := t[b.String()]; ok {
		return shared
	}
	t[b.String()] = rl
	return rl
}
