package multicache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodGroupKeysOf returns the keys (Reader.PodGroup) of the pod groups a pod is a member of,
// one per source whose membership rule names a group: multicache's label
// multicache.dev/pod-group, Kubernetes' spec.schedulingGroup.podGroupName,
// scheduler-plugins' label scheduling.x-k8s.io/pod-group. Nil for a pod of no group. A
// source the cache does not follow (--podgroup-sources) still gives a key; Reader.PodGroup
// answers nothing for it.
func PodGroupKeysOf(pod *corev1.Pod) []types.NamespacedName {
	if pod == nil {
		return nil
	}
	var out []types.NamespacedName
	if name := pod.Labels[v1alpha1.PodGroupLabel]; name != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceMulticache, pod.Namespace, name))
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceNative, pod.Namespace, *g.PodGroupName))
	}
	if name := pod.Labels[podgroupstore.SchedulerPluginsLabel]; name != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceSchedulerPlugins, pod.Namespace, name))
	}
	return out
}

// MinMember is the group's gang size whatever its source (multicache's and
// scheduler-plugins' spec.minMember, Kubernetes' gang minCount, 1 for its basic policy);
// 0 while the cache knows the group only from its members.
func (g PodGroup) MinMember() int32 {
	if g.PodGroup == nil {
		return 0
	}
	return g.PodGroup.Spec.MinMember
}
