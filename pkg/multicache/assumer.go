package multicache

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/handler"
)

// Assumer is the one way to change the cache from outside its feeds: a scheduler's
// assume, finish-binding and forget, as kube-scheduler's cache offers them. Each call goes
// through the cache's pod state machine, like an event from the API: a call the state
// machine refuses returns an error matching one of the store package's Err* values and
// changes nothing.
type Assumer interface {
	// AssumePod charges a pod the scheduler placed (pod.Spec.NodeName set) before the
	// API confirms it.
	AssumePod(pod *corev1.Pod) error
	// FinishBinding starts the expiry clock of an assumed pod: unless the API confirms it
	// within the assumed-pod TTL, the cache forgets it.
	FinishBinding(pod *corev1.Pod) error
	// ForgetPod undoes an assumption (the binding failed).
	ForgetPod(pod *corev1.Pod) error
	// IsAssumedPod reports whether a pod is assumed and not yet confirmed by the API.
	IsAssumedPod(pod *corev1.Pod) (bool, error)
}

// assumer is the Assumer over the handler: those four methods, nothing else.
type assumer struct{ h *handler.Handler }

var _ Assumer = assumer{}

func (a assumer) AssumePod(pod *corev1.Pod) error            { return a.h.AssumePod(pod) }
func (a assumer) FinishBinding(pod *corev1.Pod) error        { return a.h.FinishBinding(pod) }
func (a assumer) ForgetPod(pod *corev1.Pod) error            { return a.h.ForgetPod(pod) }
func (a assumer) IsAssumedPod(pod *corev1.Pod) (bool, error) { return a.h.IsAssumedPod(pod) }

// Retryable reports whether an Assumer call the cache refused may succeed if tried again
// later (the state machine refused it for the pod's current state, which other calls and
// events move); an invalid pod never becomes valid.
func Retryable(err error) bool { return handler.Retryable(err) }
