package store

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PodState is where a pod is in the assumed-pod state machine (see internal/handler).
type PodState string

const (
	// PodAssumed: a scheduler assumed the pod onto a node; the API has not confirmed it.
	PodAssumed PodState = "Assumed"
	// PodAdded: the API reported the pod (bound to a node or not yet).
	PodAdded PodState = "Added"
)

// PodStatus is what the PodStore knows about one pod.
type PodStatus struct {
	State PodState
	// Pod is the pod as the stores are charged with it (for an assumed pod, the assumed copy).
	Pod *corev1.Pod
	// BindingFinished is set by FinishBinding; the expiry deadline runs from then.
	BindingFinished bool
	// Deadline is when an assumed pod whose binding finished expires; zero otherwise.
	Deadline time.Time
	// APIPod is the pod as the API last reported it: Pod itself for an Added pod; for an
	// assumed pod, the unbound copy the API reported (Forget and expiry return the pod to
	// it), or nil when the API has not reported the pod yet. Reconcilers compare it with what
	// they read to turn a reconcile into an exact event.
	APIPod *corev1.Pod
}
