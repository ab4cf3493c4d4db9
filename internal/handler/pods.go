package handler

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
)

// AddPod implements ClusterEventsHandler: the API reports a pod (bound or not). An assumed
// pod reported bound is confirmed (state Added).
func (h *Handler) AddPod(pod *corev1.Pod) error { return h.podEvent(stores.OpAdd, nil, pod) }

// UpdatePod implements ClusterEventsHandler. The stores see the cached copy as the old pod.
func (h *Handler) UpdatePod(oldPod, newPod *corev1.Pod) error {
	return h.podEvent(stores.OpUpdate, oldPod, newPod)
}

// DeletePod implements ClusterEventsHandler. The stores are released from the cached copy,
// whatever the final state the caller knew.
func (h *Handler) DeletePod(pod *corev1.Pod) error { return h.podEvent(stores.OpDelete, nil, pod) }

// AssumePod implements ClusterEventsHandler.
func (h *Handler) AssumePod(pod *corev1.Pod) error { return h.podEvent(stores.OpAssume, nil, pod) }

// FinishBinding implements ClusterEventsHandler.
func (h *Handler) FinishBinding(pod *corev1.Pod) error {
	return h.podEvent(stores.OpFinishBinding, nil, pod)
}

// ForgetPod implements ClusterEventsHandler.
func (h *Handler) ForgetPod(pod *corev1.Pod) error { return h.podEvent(stores.OpForget, nil, pod) }

// podEvent plans a pod event with the state machine, fans the step out to the other stores
// and commits it to the PodStore last.
func (h *Handler) podEvent(op stores.Op, oldPod, pod *corev1.Pod) error {
	if pod == nil {
		return h.rejectUnlocked(stores.KindPod, op, "<nil>", fmt.Errorf("%w: nil pod", stores.ErrInvalidObject))
	}
	key := stores.PodKey(pod)
	h.mu.Lock()
	defer h.mu.Unlock()
	if oldPod != nil && stores.PodKey(oldPod) != key {
		return h.reject(stores.KindPod, op, key.String(), fmt.Errorf("%w: update from %s to %s", stores.ErrInvalidObject, stores.PodKey(oldPod), key))
	}
	step, err := h.pods.Plan(op, pod, h.config.Clock().Now())
	if err != nil {
		return h.reject(stores.KindPod, op, key.String(), err)
	}
	h.dispatchPod(step.Dispatch, h.sample())
	h.pods.Commit(key, step.Next)
	h.accept(stores.KindPod, op)
	return nil
}

// dispatchPod fans a planned pod step out to every pod-handling store but the PodStore.
func (h *Handler) dispatchPod(d podstore.Dispatch, timed bool) {
	if d.Op == "" {
		return
	}
	fanOut(h.podSubs, d.Op, d.Old, d.New, timed)
}

// podOp implements CacheHandler.PodOp: a synthetic pod add or delete for every enabled store
// except the skipped ones, the PodStore last. The caller holds the lock.
func (h *Handler) podOp(pod *corev1.Pod, isAdd bool, skipped ...stores.Name) {
	op := stores.OpDelete
	if isAdd {
		op = stores.OpAdd
	}
	for i := range h.podSubs {
		s := &h.podSubs[i]
		if slices.Contains(skipped, s.store) {
			continue
		}
		if isAdd {
			s.add(pod)
		} else {
			s.del(pod)
		}
	}
	if !slices.Contains(skipped, stores.PodStoreName) {
		h.pods.ApplyPodOp(pod, isAdd)
	}
	if log := h.log.V(2); log.Enabled() {
		log.Info("synthetic pod event", "op", op, "pod", stores.PodKey(pod), "skipped", skipped)
	}
}

// IsAssumedPod implements ClusterEventsHandler.
func (h *Handler) IsAssumedPod(pod *corev1.Pod) (bool, error) {
	if pod == nil {
		return false, fmt.Errorf("%w: nil pod", stores.ErrInvalidObject)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	st, ok := h.pods.Get(stores.PodKey(pod))
	if !ok {
		return false, nil
	}
	return st.State == stores.PodAssumed, nil
}

// GetPod implements ClusterEventsHandler: the cached copy of a pod (for an assumed pod, the
// assumed copy), or an error wrapping stores.ErrPodUnknown.
func (h *Handler) GetPod(pod *corev1.Pod) (*corev1.Pod, error) {
	if pod == nil {
		return nil, fmt.Errorf("%w: nil pod", stores.ErrInvalidObject)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	st, ok := h.pods.Get(stores.PodKey(pod))
	if !ok {
		return nil, fmt.Errorf("%w: %s", stores.ErrPodUnknown, stores.PodKey(pod))
	}
	return st.Pod, nil
}
