package controllers

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ownerKind is one workload kind (ReplicaSet, StatefulSet, DaemonSet, Job, Deployment) fed
// as owners.
type ownerKind struct {
	ownerType v1alpha1.OwnerType
	obj       client.Object
	apply     func(log logr.Logger, h *handler.Handler) applyFunc
}

// ownerKindOf feeds workload kind T to the cache as Owner events: its type, key, UID,
// controller, the labels of its pod template (templateOf) and its desired count of pods
// (replicasOf, nil when it has none; for a Job, the count of active pods its controller
// wants); for a ReplicaSet, its revision.
func ownerKindOf[T client.Object](t v1alpha1.OwnerType, obj T, templateOf func(T) *corev1.PodTemplateSpec, replicasOf func(T) *int32) ownerKind {
	sync := func(h *handler.Handler) func(types.NamespacedName, T, handler.Delivery) error {
		return func(key types.NamespacedName, obj T, d handler.Delivery) error {
			var gone T
			if any(obj) == any(gone) {
				// A delete that names no UID drops whatever the cache holds under the key.
				return h.Sync(key, &store.Owner{Type: t, Namespace: key.Namespace, Name: key.Name}, true, handler.Deleted)
			}
			template := templateOf(obj)
			return h.Sync(key, &store.Owner{
				Type: t, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
				ResourceVersion: obj.GetResourceVersion(), Labels: template.Labels,
				ReserveOnDelete: reserveOnDeleteOf(obj.GetAnnotations(), template.Annotations),
				Replicas:        replicasOf(obj),
				Controller:      controllerOf(obj),
				Revision:        revisionOf(t, obj.GetAnnotations()),
			}, true, d)
		}
	}
	return ownerKind{ownerType: t, obj: obj, apply: func(log logr.Logger, h *handler.Handler) applyFunc {
		return syncAs(log, stores.KindOwner, sync(h), nil)
	}}
}

// controllerOf is the workload of a known kind that controls obj (a ReplicaSet's
// Deployment), nil when none.
func controllerOf(obj client.Object) *store.OwnerRef {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return nil
	}
	switch t := v1alpha1.OwnerType(ref.Kind); t {
	case v1alpha1.OwnerReplicaSet, v1alpha1.OwnerStatefulSet, v1alpha1.OwnerDaemonSet, v1alpha1.OwnerDeployment, v1alpha1.OwnerJob:
		return &store.OwnerRef{Key: store.OwnerKey{Type: t, Namespace: obj.GetNamespace(), Name: ref.Name}, UID: ref.UID}
	}
	return nil
}

// revisionOf is a ReplicaSet's revision (0 for other kinds, or when it has none or it is
// not a number).
func revisionOf(t v1alpha1.OwnerType, annotations map[string]string) int64 {
	if t != v1alpha1.OwnerReplicaSet {
		return 0
	}
	n, err := strconv.ParseInt(annotations[store.DeploymentRevisionAnnotation], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// replicas is a desired count as the API defaults it: a nil spec.replicas means 1.
func replicas(n *int32) *int32 {
	if n == nil {
		one := int32(1)
		return &one
	}
	v := *n
	return &v
}

// reserveOnDeleteOf is an owner's reserve-on-delete annotation: the object's, else its pod
// template's ("" when neither has one).
func reserveOnDeleteOf(object, template map[string]string) string {
	if v, ok := object[v1alpha1.ReserveOnDeleteAnnotation]; ok {
		return v
	}
	return template[v1alpha1.ReserveOnDeleteAnnotation]
}

// ownerKinds are the workloads fed as owners.
var ownerKinds = []ownerKind{
	ownerKindOf(v1alpha1.OwnerReplicaSet, &appsv1.ReplicaSet{}, func(o *appsv1.ReplicaSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
		func(o *appsv1.ReplicaSet) *int32 { return replicas(o.Spec.Replicas) }),
	ownerKindOf(v1alpha1.OwnerStatefulSet, &appsv1.StatefulSet{}, func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
		func(o *appsv1.StatefulSet) *int32 { return replicas(o.Spec.Replicas) }),
	ownerKindOf(v1alpha1.OwnerDaemonSet, &appsv1.DaemonSet{}, func(o *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
		func(*appsv1.DaemonSet) *int32 { return nil }),
	// A Job's desired count is the count of active pods its controller wants, from its spec
	// and status: every status update of the Job is fed.
	ownerKindOf(v1alpha1.OwnerJob, &batchv1.Job{}, func(o *batchv1.Job) *corev1.PodTemplateSpec { return &o.Spec.Template },
		reservationstore.JobWantsActive),
	ownerKindOf(v1alpha1.OwnerDeployment, &appsv1.Deployment{}, func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template },
		func(o *appsv1.Deployment) *int32 { return replicas(o.Spec.Replicas) }),
}
