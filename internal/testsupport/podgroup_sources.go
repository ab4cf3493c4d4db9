package testsupport

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
)

// InNativeGroup makes the pod a member of Kubernetes' PodGroup group
// (spec.schedulingGroup.podGroupName).
func InNativeGroup(group string) PodOption {
	return func(p *corev1.Pod) { p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group} }
}

// InSchedulerPluginsGroup makes the pod a member of scheduler-plugins' PodGroup group
// (label scheduling.x-k8s.io/pod-group).
func InSchedulerPluginsGroup(group string) PodOption {
	return WithLabels(podgroupstore.SchedulerPluginsLabel, group)
}

// MakeNativePodGroup returns a Kubernetes PodGroup (scheduling.k8s.io/v1alpha3) with a gang
// policy of minCount.
func MakeNativePodGroup(namespace, name string, minCount int32) *schedulingv1alpha3.PodGroup {
	return &schedulingv1alpha3.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-native-pg-" + namespace + "-" + name)},
		Spec: schedulingv1alpha3.PodGroupSpec{SchedulingPolicy: schedulingv1alpha3.PodGroupSchedulingPolicy{
			Gang: &schedulingv1alpha3.GangSchedulingPolicy{MinCount: minCount},
		}},
	}
}

// MakeSchedulerPluginsPodGroup returns a scheduler-plugins PodGroup
// (scheduling.x-k8s.io/v1alpha1) of minMember, as unstructured.
func MakeSchedulerPluginsPodGroup(namespace, name string, minMember int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"minMember": minMember}}}
	u.SetGroupVersionKind(podgroupstore.SchedulerPluginsGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetUID(types.UID("uid-sp-pg-" + namespace + "-" + name))
	return u
}
