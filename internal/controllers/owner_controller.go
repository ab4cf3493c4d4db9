package controllers

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// ownerFeed feeds one workload kind (ReplicaSet, StatefulSet, DaemonSet, Deployment) to the
// cache as Owner events: its type, key, UID, the labels of its pod template and, for a
// ReplicaSet or StatefulSet, its desired count.
type ownerFeed[T client.Object] struct {
	reader    client.Reader
	handler   *handler.Handler
	ownerType v1alpha1.OwnerType
	newObj    func() T
	// templateOf returns the owner's pod template (its labels and annotations are read).
	templateOf func(T) *corev1.PodTemplateSpec
	// replicasOf returns the owner's desired count of pods, nil when it has none.
	replicasOf func(T) *int32
}

// Reconcile implements reconcile.Reconciler.
func (f *ownerFeed[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := f.newObj()
	err := f.reader.Get(ctx, req.NamespacedName, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	key := stores.OwnerKey{Type: f.ownerType, Namespace: req.Namespace, Name: req.Name}
	last, seen := f.handler.LastSeenOwner(key)
	h := f.handler
	switch {
	case err != nil && seen:
		report(ctx, stores.KindOwner, h.DeleteOwner(last))
	case err != nil:
	case !seen:
		report(ctx, stores.KindOwner, h.AddOwner(f.toOwner(obj)))
	case last.UID != obj.GetUID():
		report(ctx, stores.KindOwner, h.DeleteOwner(last))
		report(ctx, stores.KindOwner, h.AddOwner(f.toOwner(obj)))
	case last.ResourceVersion != obj.GetResourceVersion():
		report(ctx, stores.KindOwner, h.UpdateOwner(last, f.toOwner(obj)))
	}
	return ctrl.Result{}, nil
}

func (f *ownerFeed[T]) toOwner(obj T) *stores.Owner {
	return &stores.Owner{
		Type: f.ownerType, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(), Labels: f.templateOf(obj).Labels,
		ReserveOnDelete: reserveOnDeleteOf(obj.GetAnnotations(), f.templateOf(obj).Annotations),
		Replicas:        f.replicasOf(obj),
	}
}

// reserveOnDeleteOf is an owner's reserve-on-delete annotation: the object's, else its pod
// template's ("" when neither has one).
func reserveOnDeleteOf(object, template map[string]string) string {
	if v, ok := object[v1alpha1.ReserveOnDeleteAnnotation]; ok {
		return v
	}
	return template[v1alpha1.ReserveOnDeleteAnnotation]
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

// ownerKinds are the workloads fed as owners, with their pod template labels.
var ownerKinds = []struct {
	ownerType v1alpha1.OwnerType
	obj       client.Object
	setup     func(r client.Reader, h *handler.Handler) ownerReconciler
}{
	{v1alpha1.OwnerReplicaSet, &appsv1.ReplicaSet{}, func(r client.Reader, h *handler.Handler) ownerReconciler {
		return &ownerFeed[*appsv1.ReplicaSet]{r, h, v1alpha1.OwnerReplicaSet,
			func() *appsv1.ReplicaSet { return &appsv1.ReplicaSet{} },
			func(o *appsv1.ReplicaSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
			func(o *appsv1.ReplicaSet) *int32 { return replicas(o.Spec.Replicas) }}
	}},
	{v1alpha1.OwnerStatefulSet, &appsv1.StatefulSet{}, func(r client.Reader, h *handler.Handler) ownerReconciler {
		return &ownerFeed[*appsv1.StatefulSet]{r, h, v1alpha1.OwnerStatefulSet,
			func() *appsv1.StatefulSet { return &appsv1.StatefulSet{} },
			func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
			func(o *appsv1.StatefulSet) *int32 { return replicas(o.Spec.Replicas) }}
	}},
	{v1alpha1.OwnerDaemonSet, &appsv1.DaemonSet{}, func(r client.Reader, h *handler.Handler) ownerReconciler {
		return &ownerFeed[*appsv1.DaemonSet]{r, h, v1alpha1.OwnerDaemonSet,
			func() *appsv1.DaemonSet { return &appsv1.DaemonSet{} },
			func(o *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &o.Spec.Template },
			func(*appsv1.DaemonSet) *int32 { return nil }}
	}},
	{v1alpha1.OwnerDeployment, &appsv1.Deployment{}, func(r client.Reader, h *handler.Handler) ownerReconciler {
		return &ownerFeed[*appsv1.Deployment]{r, h, v1alpha1.OwnerDeployment,
			func() *appsv1.Deployment { return &appsv1.Deployment{} },
			func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template },
			func(*appsv1.Deployment) *int32 { return nil }}
	}},
}

// ownerReconciler is an ownerFeed of any workload kind.
type ownerReconciler interface {
	Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
}

// CachedVersion reports the resource version of the owner the cache holds under key.
func (f *ownerFeed[T]) CachedVersion(key types.NamespacedName) (string, bool) {
	last, ok := f.handler.LastSeenOwner(stores.OwnerKey{Type: f.ownerType, Namespace: key.Namespace, Name: key.Name})
	if !ok {
		return "", false
	}
	return last.ResourceVersion, true
}
