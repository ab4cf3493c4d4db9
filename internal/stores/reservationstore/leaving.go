package reservationstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// KeepsPlaceFor reports whether the place of leaving, a bound pod that is going (its
// deletion was asked for, and a kubelet takes up to its grace period to stop it; or the
// API already removed it and the cache has not applied that yet), is to be kept for pod once
// the cache sees leaving gone: leaving asks for it (reserve-on-delete on itself or its
// owner) and the hold would select pod (same namespace, leaving's labels less its
// controller's revision labels). Its controller creates the replacement as soon as the
// deletion is asked for, so a scheduler places it before any hold exists: this is how it
// knows where the place will be. It says no where PodGone would refuse the hold (leaving's
// node is gone, it requests nothing to hold); whether the owner still wants a replacement
// is decided when leaving is gone, as for any hold. The caller holds the read lock.
func (s *Store) KeepsPlaceFor(leaving, pod *corev1.Pod) bool {
	if leaving == nil || pod == nil || leaving.Spec.NodeName == "" ||
		!qualifies(leaving) || leaving.Namespace != pod.Namespace || leaving.UID == pod.UID {
		return false
	}
	if keep, err := s.keepsPlace(leaving); err != nil || !keep || !s.nodeExists(leaving.Spec.NodeName) {
		return false
	}
	// The hold PodGone would place (none: nothing to hold, no labels to select by).
	r, err := Replacement(leaving, 0, time.Time{})
	return err == nil && selectorOf(r).Matches(labels.Set(pod.Labels))
}
