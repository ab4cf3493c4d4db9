package controllers

import (
	"fmt"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A PodGroup of another API than multicache's own enters the cache converted to the one
// shape the handler, the store, the snapshots and the drift comparison know.

// converted returns the common shape of a group from another source: its identity under
// the store's key (podgroupstore.Key), and minMember.
func converted(meta metav1.Object, source store.PodGroupSource, minMember int32) *v1alpha1.PodGroup {
	key := podgroupstore.Key(source, meta.GetNamespace(), meta.GetName())
	return &v1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name, UID: meta.GetUID(), ResourceVersion: meta.GetResourceVersion(),
			Generation: meta.GetGeneration(), CreationTimestamp: meta.GetCreationTimestamp(), Labels: meta.GetLabels(),
			// Kubernetes' PodGroups carry a protection finalizer: deleted, they stay (being
			// deleted) until kube-controller-manager sees their pods gone.
			DeletionTimestamp: meta.GetDeletionTimestamp(),
		},
		Spec: v1alpha1.PodGroupSpec{MinMember: minMember},
	}
}

// PodGroupFromNative converts Kubernetes' PodGroup. Its gang size is
// spec.schedulingPolicy.gang.minCount; a group with the basic policy (no gang) counts as a
// gang of one, so that it runs once any member runs. The native API has no schedule timeout.
func PodGroupFromNative(pg *schedulingv1alpha3.PodGroup) *v1alpha1.PodGroup {
	minMember := int32(1)
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil && g.MinCount > 0 {
		minMember = g.MinCount
	}
	return converted(pg, store.PodGroupSourceNative, minMember)
}

// PodGroupFromSchedulerPlugins converts scheduler-plugins' PodGroup: spec.minMember,
// spec.scheduleTimeoutSeconds and status.scheduleStartTime map to the fields of the same
// names. A field of the wrong type is an error naming it.
func PodGroupFromSchedulerPlugins(u *unstructured.Unstructured) (*v1alpha1.PodGroup, error) {
	minMember, _, err := unstructured.NestedInt64(u.Object, "spec", "minMember")
	if err != nil {
		return nil, fmt.Errorf("scheduler-plugins PodGroup %s/%s: spec.minMember: %w", u.GetNamespace(), u.GetName(), err)
	}
	// scheduler-plugins treats an unset or zero minMember as a group of one.
	pg := converted(u, store.PodGroupSourceSchedulerPlugins, max(int32(min(minMember, 1<<31-1)), 1))
	timeout, found, err := unstructured.NestedInt64(u.Object, "spec", "scheduleTimeoutSeconds")
	if err != nil {
		return nil, fmt.Errorf("scheduler-plugins PodGroup %s/%s: spec.scheduleTimeoutSeconds: %w", u.GetNamespace(), u.GetName(), err)
	}
	if found && timeout > 0 {
		pg.Spec.ScheduleTimeoutSeconds = new(int32(min(timeout, 1<<31-1)))
	}
	start, found, err := unstructured.NestedString(u.Object, "status", "scheduleStartTime")
	if err != nil {
		return nil, fmt.Errorf("scheduler-plugins PodGroup %s/%s: status.scheduleStartTime: %w", u.GetNamespace(), u.GetName(), err)
	}
	if found && start != "" {
		var t metav1.Time
		if err := t.UnmarshalQueryParameter(start); err != nil {
			return nil, fmt.Errorf("scheduler-plugins PodGroup %s/%s: status.scheduleStartTime %q: %w", u.GetNamespace(), u.GetName(), start, err)
		}
		pg.Status.ScheduleStartTime = &t
	}
	return pg, nil
}
