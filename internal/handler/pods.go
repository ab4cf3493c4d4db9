package handler

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// AssumePod implements ClusterEventsHandler.
func (h *Handler) AssumePod(pod *corev1.Pod) error { return h.podEvent(stores.OpAssume, nil, pod) }

// FinishBinding implements ClusterEventsHandler.
func (h *Handler) FinishBinding(pod *corev1.Pod) error {
	return h.podEvent(stores.OpFinishBinding, nil, pod)
}

// ForgetPod implements ClusterEventsHandler.
func (h *Handler) ForgetPod(pod *corev1.Pod) error { return h.podEvent(stores.OpForget, nil, pod) }

// podEvent plans a pod event with the state machine, fans the step out to the other stores
// and commits it to the PodStore last, under the lock.
func (h *Handler) podEvent(op stores.Op, oldPod, pod *corev1.Pod) error {
	if pod == nil {
		return h.rejectUnlocked(stores.KindPod, op, "<nil>", fmt.Errorf("%w: nil pod", store.ErrInvalidObject))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.podEventLocked(op, oldPod, pod)
}

// podEventLocked is podEvent for a caller that holds the lock (the mutex is not
// reentrant).
func (h *Handler) podEventLocked(op stores.Op, oldPod, pod *corev1.Pod) error {
	key := store.PodKey(pod)
	if oldPod != nil && store.PodKey(oldPod) != key {
		return h.reject(stores.KindPod, op, key.String(), fmt.Errorf("%w: update from %s to %s", store.ErrInvalidObject, store.PodKey(oldPod), key))
	}
	step, err := h.pods.Plan(op, pod, h.config.Clock().Now())
	if err != nil {
		return h.reject(stores.KindPod, op, key.String(), err)
	}
	h.dispatchPod(op, step.Dispatch, h.sample())
	h.pods.Commit(key, step.Next)
	h.accept(stores.KindPod, op)
	return nil
}

// syncPod brings the cache in line with what the API reports of one pod, atomically: it
// reads the pod's state and applies the event derived from it under one hold of the lock,
// so a ForgetPod or an expiry cannot slip in between and turn a binding into a rejected
// event. apiPod is the API's current object, nil when it is not found; inScope is false
// when the pod is filtered out of this cache (a sub-cluster keeps only pods bound to its
// nodes). The event is:
//
//   - gone or filtered out, and cached: delete the cached copy. A pod filtered out only
//     because the API has not bound it yet while the cache holds it assumed is left alone:
//     the assumption stands.
//   - not cached: add.
//   - cached under another UID (deleted and recreated): delete, then add.
//   - assumed, and the API reports it bound (or for the first time): add, which confirms it.
//   - otherwise, when the API's object is not the one cached (its resource version moved,
//     or a relist decoded it again): update from the API's last copy.
//
// Errors are typed (stores.Err*); see Retryable for which are worth a retry.
//
// As delivered (d, see Delivery): a Deleted pod removes the cached one only when it is the
// same pod (UID); a Backwards pod is taken though older.
func (h *Handler) syncPod(key types.NamespacedName, apiPod *corev1.Pod, inScope bool, d Delivery) error {
	if apiPod != nil && store.PodKey(apiPod) != key {
		return h.rejectUnlocked(stores.KindPod, stores.OpUpdate, key.String(),
			fmt.Errorf("%w: API pod %s reported for %s", store.ErrInvalidObject, store.PodKey(apiPod), key))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	st, seen := h.pods.Get(key)
	if d == Deleted {
		if cached := cachedPodUID(st); seen && apiPod != nil && apiPod.UID != "" && cached != "" && apiPod.UID != cached {
			lateDelete(h, stores.KindPod, key.String(), apiPod.UID, cached)
			return nil
		}
		apiPod, inScope = nil, true
	}
	if d == Backwards && seen && apiPod != nil && st.APIPod != nil && older(apiPod.ResourceVersion, st.APIPod.ResourceVersion) {
		versionsBackwards(h, stores.KindPod, key.String(), st.APIPod.ResourceVersion, apiPod.ResourceVersion)
	}
	gone := apiPod == nil // not merely filtered out
	if apiPod != nil && !inScope {
		if seen && st.State == store.PodAssumed && apiPod.Spec.NodeName == "" {
			return nil
		}
		apiPod = nil
	}
	switch {
	case apiPod == nil && seen:
		if err := h.podEventLocked(stores.OpDelete, nil, st.Pod); err != nil {
			return err
		}
		if gone {
			h.keepPlace(st, nil)
		}
		return nil
	case apiPod == nil:
		return nil
	case !seen:
		return h.podEventLocked(stores.OpAdd, nil, apiPod)
	case d != Backwards && st.APIPod != nil && older(apiPod.ResourceVersion, st.APIPod.ResourceVersion):
		// A notification older than what the cache holds (a repair applied a newer read, or
		// a shard's other watch reported it first), even of a pod since deleted and created
		// again under the name: nothing (sync.go). Before the UID, lest the old pod come back.
		return nil
	case st.APIPod != nil && st.APIPod.UID != apiPod.UID, st.APIPod == nil && st.Pod.UID != "" && st.Pod.UID != apiPod.UID:
		if err := h.podEventLocked(stores.OpDelete, nil, st.Pod); err != nil {
			return err
		}
		h.keepPlace(st, apiPod) // the replacement (same name) may take the place at once
		return h.podEventLocked(stores.OpAdd, nil, apiPod)
	case st.State == store.PodAssumed && (apiPod.Spec.NodeName != "" || st.APIPod == nil):
		return h.podEventLocked(stores.OpAdd, nil, apiPod)
	case st.APIPod != apiPod:
		// The resource version moved; or a relist handed the informer a new object of the
		// same version, which the cache takes too, lest it keep the old one alive and every
		// pod be held twice.
		if err := h.podEventLocked(stores.OpUpdate, st.APIPod, apiPod); err != nil {
			return err
		}
		if endedByDeletion(st.Pod, apiPod) {
			// The kubelet gives a deleted pod a terminal phase before it is removed (a Job's
			// pod stays until its controller drops its tracking finalizer): the node stops
			// charging it now, so its place is kept from now. Its removal later decides
			// nothing again (a terminal pod keeps no place).
			gone := *st.Pod
			gone.DeletionTimestamp, gone.DeletionGracePeriodSeconds = apiPod.DeletionTimestamp, apiPod.DeletionGracePeriodSeconds
			charged := st
			charged.Pod = &gone
			h.keepPlace(charged, nil)
		}
	}
	return nil
}

// cachedPodUID is the UID of the pod the cache holds: the API's copy, else the assumed one.
func cachedPodUID(st store.PodStatus) types.UID {
	if st.APIPod != nil {
		return st.APIPod.UID
	}
	if st.Pod != nil {
		return st.Pod.UID
	}
	return ""
}

// endedByDeletion reports whether a pod update is a deleted pod turning terminal: the
// cache charged it live, the API reports it terminal with a deletionTimestamp.
func endedByDeletion(charged, apiPod *corev1.Pod) bool {
	return charged != nil && !store.IsTerminal(charged) && store.IsTerminal(apiPod) && apiPod.DeletionTimestamp != nil
}

// keepPlace lets a pod the API reported gone keep its place on its node if it asks to
// (reservationstore.Store.PodGone): under the lock of its delete, so that no reader sees
// the node without the charge. Only a pod the API had bound counts, not an assumption.
// next is the pod of the same name that replaced it, if any.
func (h *Handler) keepPlace(st store.PodStatus, next *corev1.Pod) {
	rs, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok || st.State != store.PodAdded || st.Pod.Spec.NodeName == "" {
		return
	}
	kept, err := rs.PodGone(st.Pod, next)
	h.takeOutbox(rs)
	switch {
	case err != nil:
		h.log.Info("deleted pod's place not kept", "pod", store.PodKey(st.Pod), "node", st.Pod.Spec.NodeName, "reason", err.Error())
	case kept:
		h.log.V(1).Info("deleted pod's place kept until its Reservation comes", "pod", store.PodKey(st.Pod), "node", st.Pod.Spec.NodeName)
	}
}

// Retryable reports whether a rejected pod event may succeed if tried again later: the
// state machine refused it for the pod's current state, which other callers (assume,
// forget, expiry) move. Invalid objects never become valid.
func Retryable(err error) bool {
	return err != nil && !errors.Is(err, store.ErrInvalidObject)
}

// dispatchPod fans a planned pod step out to every pod-handling store but the PodStore.
// An assumption reaches a store that implements store.PodAssumer (the ReservationStore) as
// such: a pod a scheduler places now may consume a reservation that a pod the API reports
// may not.
func (h *Handler) dispatchPod(op stores.Op, d podstore.Dispatch, timed bool) {
	if d.Op == "" {
		return
	}
	if op == stores.OpAssume {
		d.Op = stores.OpAssume
	}
	fanOut(h.podSubs, d.Op, d.Old, d.New, timed)
}

// podOp dispatches a synthetic pod add (isAdd) or delete to every enabled store except the
// skipped ones, the PodStore last: an assumed pod's expiry, and the placeholders stores ask
// for (applyOutbox). The caller holds the lock.
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
		log.Info("synthetic pod event", "op", op, "pod", store.PodKey(pod), "skipped", skipped)
	}
}

// IsAssumedPod implements ClusterEventsHandler.
func (h *Handler) IsAssumedPod(pod *corev1.Pod) (bool, error) {
	if pod == nil {
		return false, fmt.Errorf("%w: nil pod", store.ErrInvalidObject)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	st, ok := h.pods.Get(store.PodKey(pod))
	if !ok {
		return false, nil
	}
	return st.State == store.PodAssumed, nil
}

// GetPod implements ClusterEventsHandler: the cached copy of a pod (for an assumed pod, the
// assumed copy), or an error wrapping store.ErrPodUnknown.
func (h *Handler) GetPod(pod *corev1.Pod) (*corev1.Pod, error) {
	if pod == nil {
		return nil, fmt.Errorf("%w: nil pod", store.ErrInvalidObject)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	st, ok := h.pods.Get(store.PodKey(pod))
	if !ok {
		return nil, fmt.Errorf("%w: %s", store.ErrPodUnknown, store.PodKey(pod))
	}
	return st.Pod, nil
}
