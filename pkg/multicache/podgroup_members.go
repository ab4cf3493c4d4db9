package multicache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The membership rules of the pod group sources: a pod is a member of the group its
// source's rule names, in its own namespace. Kubernetes' native groups (source
// PodGroupSourceNative) use no label: a member names its group in
// spec.schedulingGroup.podGroupName.
const (
	// PodGroupLabel is multicache's rule (PodGroupSourceMulticache): the label whose value
	// is the name of the member's PodGroup.
	PodGroupLabel = v1alpha1.PodGroupLabel
	// SchedulerPluginsPodGroupLabel is scheduler-plugins' rule
	// (PodGroupSourceSchedulerPlugins): the label whose value is the name of the member's
	// scheduling.x-k8s.io PodGroup.
	SchedulerPluginsPodGroupLabel = podgroupstore.SchedulerPluginsLabel
)

// PodGroupKeysOf returns the keys (Reader.PodGroup) of the pod groups a pod is a member of,
// one per source whose membership rule names a group: multicache's label
// PodGroupLabel, Kubernetes' spec.schedulingGroup.podGroupName, scheduler-plugins' label
// SchedulerPluginsPodGroupLabel. Nil for a pod of no group. A
// source the cache does not follow (--podgroup-sources) still gives a key; Reader.PodGroup
// answers nothing for it.
func PodGroupKeysOf(pod *corev1.Pod) []types.NamespacedName {
	if pod == nil {
		return nil
	}
	var out []types.NamespacedName
	if name := pod.Labels[PodGroupLabel]; name != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceMulticache, pod.Namespace, name))
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceNative, pod.Namespace, *g.PodGroupName))
	}
	if name := pod.Labels[SchedulerPluginsPodGroupLabel]; name != "" {
		out = append(out, PodGroupKey(store.PodGroupSourceSchedulerPlugins, pod.Namespace, name))
	}
	return out
}
