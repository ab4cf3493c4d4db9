package operator

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ownerTransforms keep of the workload owners (ReplicaSets, StatefulSets, DaemonSets, Jobs,
// Deployments) only what the owner feed reads: identity, resource version, the labels of
// the pod template, the reserve-on-delete annotation of the object and of its template,
// a ReplicaSet's, StatefulSet's or Deployment's spec.replicas, a ReplicaSet's controller
// and revision, a Job's fields its wanted count of active pods is computed from (whether
// a deleted pod's replacement is coming). A ReplicaSet with its whole pod template costs
// kilobytes; the cache needs a few dozen bytes of it, and clusters keep ten old
// ReplicaSets per Deployment.
func ownerTransforms() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&appsv1.ReplicaSet{}: {Transform: ownerTransform(func(o *appsv1.ReplicaSet) *appsv1.ReplicaSet {
			return &appsv1.ReplicaSet{TypeMeta: o.TypeMeta, ObjectMeta: replicaSetMeta(o.ObjectMeta),
				Spec: appsv1.ReplicaSetSpec{Replicas: o.Spec.Replicas, Template: templateLabels(o.Spec.Template)}}
		})},
		&appsv1.StatefulSet{}: {Transform: ownerTransform(func(o *appsv1.StatefulSet) *appsv1.StatefulSet {
			return &appsv1.StatefulSet{TypeMeta: o.TypeMeta, ObjectMeta: ownerMeta(o.ObjectMeta),
				Spec: appsv1.StatefulSetSpec{Replicas: o.Spec.Replicas, Template: templateLabels(o.Spec.Template)}}
		})},
		&appsv1.DaemonSet{}: {Transform: ownerTransform(func(o *appsv1.DaemonSet) *appsv1.DaemonSet {
			return &appsv1.DaemonSet{TypeMeta: o.TypeMeta, ObjectMeta: ownerMeta(o.ObjectMeta),
				Spec: appsv1.DaemonSetSpec{Template: templateLabels(o.Spec.Template)}}
		})},
		&batchv1.Job{}: {Transform: ownerTransform(jobForOwnerFeed)},
		&appsv1.Deployment{}: {Transform: ownerTransform(func(o *appsv1.Deployment) *appsv1.Deployment {
			return &appsv1.Deployment{TypeMeta: o.TypeMeta, ObjectMeta: ownerMeta(o.ObjectMeta),
				Spec: appsv1.DeploymentSpec{Replicas: o.Spec.Replicas, Template: templateLabels(o.Spec.Template)}}
		})},
	}
}

// ownerTransform applies strip to objects of type T and passes anything else (a deleted
// final state unknown, say) through.
func ownerTransform[T client.Object](strip func(T) T) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if o, ok := in.(T); ok {
			return strip(o), nil
		}
		return in, nil
	}
}

// ownerMeta keeps an owner's identity and version, and its reserve-on-delete annotation.
func ownerMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, DeletionTimestamp: m.DeletionTimestamp, Annotations: keptAnnotations(m.Annotations)}
}

// replicaSetMeta is ownerMeta and what tells a Deployment's newest ReplicaSet: its
// controller reference and its revision annotation.
func replicaSetMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := ownerMeta(m)
	if ref := metav1.GetControllerOfNoCopy(&m); ref != nil {
		out.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	if v, ok := m.Annotations[store.DeploymentRevisionAnnotation]; ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[store.DeploymentRevisionAnnotation] = v
	}
	return out
}

// templateLabels keeps a pod template's labels and its reserve-on-delete annotation only.
func templateLabels(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: t.Labels, Annotations: keptAnnotations(t.Annotations)}}
}

// keptAnnotations keeps the one annotation of an owner the cache reads
// (v1alpha1.ReserveOnDeleteAnnotation); nil when absent, so most owners cost nothing more.
func keptAnnotations(a map[string]string) map[string]string {
	v, ok := a[v1alpha1.ReserveOnDeleteAnnotation]
	if !ok {
		return nil
	}
	return map[string]string{v1alpha1.ReserveOnDeleteAnnotation: v}
}

// jobForOwnerFeed keeps of a Job what reservationstore.JobWantsActive reads: parallelism,
// completions, suspend and managedBy; the succeeded counts and the conditions' types and
// statuses.
func jobForOwnerFeed(o *batchv1.Job) *batchv1.Job {
	j := &batchv1.Job{TypeMeta: o.TypeMeta, ObjectMeta: ownerMeta(o.ObjectMeta),
		Spec: batchv1.JobSpec{Parallelism: o.Spec.Parallelism, Completions: o.Spec.Completions, Suspend: o.Spec.Suspend,
			ManagedBy: o.Spec.ManagedBy, Template: templateLabels(o.Spec.Template)},
		Status: batchv1.JobStatus{Succeeded: o.Status.Succeeded}}
	if u := o.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded) > 0 {
		j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: u.Succeeded}
	}
	for _, c := range o.Status.Conditions {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c.Type, Status: c.Status})
	}
	return j
}
