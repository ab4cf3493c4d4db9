package store

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// PodKey identifies a pod by namespace and name. Struct keys share the strings of the pod
// itself, so indexing a pod allocates nothing.
func PodKey(pod *corev1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// IsTerminal reports whether a pod has finished: it holds no resources on its node any more.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// IsBestEffort reports whether a pod is charged to its node's best-effort pool.
func IsBestEffort(pod *corev1.Pod) bool {
	return pod.Annotations[v1alpha1.ResourceTypeAnnotation] == string(v1alpha1.ResourceTypeBestEffort)
}

// ControllerOwner returns the workload that controls a pod, if it is of a known owner type.
func ControllerOwner(pod *corev1.Pod) (OwnerKey, types.UID, bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return OwnerKey{}, "", false
	}
	switch t := v1alpha1.OwnerType(ref.Kind); t {
	case v1alpha1.OwnerReplicaSet, v1alpha1.OwnerStatefulSet, v1alpha1.OwnerDaemonSet, v1alpha1.OwnerDeployment, v1alpha1.OwnerJob:
		return OwnerKey{Type: t, Namespace: pod.Namespace, Name: ref.Name}, ref.UID, true
	}
	return OwnerKey{}, "", false
}

// placeholderAnnotation marks the synthetic pods that charge reservations on their nodes.
// Its value is the reservation's name.
const placeholderAnnotation = "multicache.dev/reservation-placeholder"

// placeholderPrefix starts the name of every placeholder pod; ':' cannot occur in the name
// of a real pod, so a placeholder never collides with one.
const placeholderPrefix = "reservation:"

// NewPlaceholderPod returns the synthetic pod that charges a reservation's resources on a
// node: same namespace, the reservation's resources as the requests of one container.
func NewPlaceholderPod(r *v1alpha1.Reservation, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   r.Namespace,
			Name:        placeholderPrefix + r.Name,
			UID:         "placeholder-" + r.UID,
			Annotations: map[string]string{placeholderAnnotation: r.Name},
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name:      "placeholder",
				Resources: corev1.ResourceRequirements{Requests: r.Spec.Resources},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// PlaceholderOf returns the reservation a placeholder pod stands for.
func PlaceholderOf(pod *corev1.Pod) (types.NamespacedName, bool) {
	name, ok := pod.Annotations[placeholderAnnotation]
	if !ok {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: pod.Namespace, Name: name}, true
}

// IsPlaceholder reports whether a pod is the synthetic placeholder of a Reservation: a
// store that handles pods receives them too and must decide whether they count (the node
// store charges them; a store that counts workloads' pods skips them).
func IsPlaceholder(pod *corev1.Pod) bool {
	_, ok := PlaceholderOf(pod)
	return ok
}
