package stores

import corev1 "k8s.io/api/core/v1"

// PodOp is a synthetic pod event a store asks for (the ReservationStore's placeholders): an
// add (Add) or a delete of Pod for the other stores.
type PodOp struct {
	Pod *corev1.Pod
	Add bool
}

// PodOpSource is a store that asks for synthetic pod events instead of dispatching them:
// it collects them during each call the handler makes into it, and the handler takes them
// (TakePodOps) and applies them once the call returns. Stores never call the handler.
type PodOpSource interface {
	TakePodOps() []PodOp
}
