package multicache

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Assumer is the one way to change the cache from outside its feeds: a scheduler's
// assume, finish-binding and forget, as kube-scheduler's cache offers them for pods and its
// DRA plugin for claims. Each call goes through the cache's state machine, like an event
// from the API: a call it refuses returns an error matching one of the store package's
// Err* values and changes nothing.
type Assumer interface {
	// AssumePod charges a pod the scheduler placed (pod.Spec.NodeName set) before the
	// API confirms it. As with kube-scheduler's cache, the pod and everything it points
	// to (its resource lists) belong to the cache from then on: never modify them.
	AssumePod(pod *corev1.Pod) error
	// FinishBinding starts the expiry clock of an assumed pod: unless the API confirms it
	// within the assumed-pod TTL, the cache forgets it.
	FinishBinding(pod *corev1.Pod) error
	// ForgetPod undoes an assumption (the binding failed).
	ForgetPod(pod *corev1.Pod) error
	// IsAssumedPod reports whether a pod is assumed and not yet confirmed by the API.
	IsAssumedPod(pod *corev1.Pod) (bool, error)

	// AssumeClaim charges a ResourceClaim's allocation (claim.Status.Allocation, the devices
	// the scheduler allocated) before the API shows it, as kube-scheduler's
	// SignalClaimPendingAllocation and AssumeClaimAfterAPICall do: with the claim as read
	// plus the allocation, or with the claim the status update returned. It counts at once
	// in the devices' views and metrics, and until the API shows the claim allocated at
	// this version or a newer one (the API's claim then counts instead, once), the claim is
	// deleted, or ForgetClaim; it never expires. Refused, changing nothing: no allocation
	// (store.ErrInvalidObject), a device another claim holds (store.ErrDeviceInUse), an older
	// version than the cache's (store.ErrClaimOutOfSync), a claim the API shows allocated
	// otherwise (store.ErrClaimAllocated), the devices store off (store.ErrNoDeviceStore).
	// After a status update that succeeded (where kube-scheduler calls
	// RemoveClaimPendingAllocation), call AssumeClaim again with the claim the update
	// returned, not ForgetClaim, which would show the devices free until the informer
	// delivers the update. Reader.NodeDevices reads a node's devices, the assumed ones
	// counted.
	AssumeClaim(claim *resourcev1.ResourceClaim) error
	// ForgetClaim undoes AssumeClaim (the status update failed, or the scheduler gave the
	// allocation up): the API's claim counts again. A claim not assumed is refused
	// (store.ErrClaimNotAssumed).
	ForgetClaim(claim *resourcev1.ResourceClaim) error
	// IsAssumedClaim reports whether a claim's allocation is assumed and not yet shown by
	// the API.
	IsAssumedClaim(claim *resourcev1.ResourceClaim) (bool, error)
}

// assumer is the Assumer over the handler: those methods, nothing else.
type assumer struct{ h *handler.Handler }

var _ Assumer = assumer{}

func (a assumer) AssumePod(pod *corev1.Pod) error            { return a.h.AssumePod(pod) }
func (a assumer) FinishBinding(pod *corev1.Pod) error        { return a.h.FinishBinding(pod) }
func (a assumer) ForgetPod(pod *corev1.Pod) error            { return a.h.ForgetPod(pod) }
func (a assumer) IsAssumedPod(pod *corev1.Pod) (bool, error) { return a.h.IsAssumedPod(pod) }
func (a assumer) AssumeClaim(claim *resourcev1.ResourceClaim) error {
	return a.h.AssumeClaim(claim)
}
func (a assumer) ForgetClaim(claim *resourcev1.ResourceClaim) error {
	return a.h.ForgetClaim(claim)
}
func (a assumer) IsAssumedClaim(claim *resourcev1.ResourceClaim) (bool, error) {
	return a.h.IsAssumedClaim(claim)
}

// Retryable reports whether the same Assumer call the cache refused may succeed if tried
// again later: the state machine refused it for the pod's or claim's current state, which
// other calls and events move, or a device another claim holds may be freed. It is false
// when trying again cannot help: an invalid object; an object older than the cache's, of
// another incarnation, or a claim the API shows allocated otherwise (read the object again
// and decide anew); forgetting a claim not assumed; no store counting devices (a
// configuration to change).
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	for _, never := range []error{store.ErrInvalidObject, store.ErrClaimOutOfSync, store.ErrUIDMismatch,
		store.ErrClaimAllocated, store.ErrClaimNotAssumed, store.ErrNoDeviceStore} {
		if errors.Is(err, never) {
			return false
		}
	}
	return true
}
