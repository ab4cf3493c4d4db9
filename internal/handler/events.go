package handler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// objectEvent runs one event of a kind other than Pod: lock, validate, fan out, count.
func objectEvent[K comparable, T comparable](h *Handler, k *objectKind[K, T], op stores.Op, oldObj, newObj T) error {
	var zero T
	if (op != stores.OpDelete && any(newObj) == any(zero)) || (op != stores.OpAdd && any(oldObj) == any(zero)) {
		return h.rejectUnlocked(k.kind, op, "<nil>", fmt.Errorf("%w: nil object", store.ErrInvalidObject))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return objectEventLocked(h, k, op, oldObj, newObj)
}

// objectEventLocked validates and applies one event of a kind other than Pod under the lock
// the caller holds.
func objectEventLocked[K comparable, T comparable](h *Handler, k *objectKind[K, T], op stores.Op, oldObj, newObj T) error {
	key, charged, err := k.plan(op, oldObj, newObj)
	if err != nil {
		return h.reject(k.kind, op, fmt.Sprint(key), err)
	}
	k.apply(op, key, charged, newObj, h.sample())
	h.accept(k.kind, op)
	return nil
}

// Add, Update and Delete are ClusterEventsHandler's edge form: obj is a pointer to an
// object of a kind the handler keeps (a Pod, a Node, an NMNode, a CustomNodeResource, a
// PodGroup, a PodDisruptionBudget, a *store.Owner, a Movement, a Reservation, a
// ResourceSlice, a ResourceClaim or a DeviceClass). An update is the previous-cached and the
// current object; a delete carries the last-seen object (for a pod, the stores are released
// from the cached copy whatever the final state the caller knew). An assumed pod the API
// reports bound is confirmed.
func (h *Handler) Add(obj any) error { return h.edge(stores.OpAdd, nil, obj) }

// Update implements ClusterEventsHandler (see Add). The stores see the cached copy of a pod
// as the old pod.
func (h *Handler) Update(oldObj, newObj any) error { return h.edge(stores.OpUpdate, oldObj, newObj) }

// Delete implements ClusterEventsHandler (see Add).
func (h *Handler) Delete(obj any) error { return h.edge(stores.OpDelete, obj, nil) }

// edge runs one event of the edge form on the kind of its object.
func (h *Handler) edge(op stores.Op, oldObj, newObj any) error {
	obj := newObj
	if op == stores.OpDelete {
		obj = oldObj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		old, isPod := oldObj.(*corev1.Pod)
		if op != stores.OpUpdate {
			return h.podEvent(op, nil, pod)
		}
		if oldObj != nil && !isPod {
			return h.rejectUnlocked(stores.KindPod, op, "<mismatch>", fmt.Errorf("%w: an update from a %T to a pod", store.ErrInvalidObject, oldObj))
		}
		return h.podEvent(op, old, pod)
	}
	k, ok := h.kindOf(obj)
	if !ok {
		return h.refuseUnknown(op, obj)
	}
	return k.event(h, op, oldObj, newObj)
}

// sample reports whether this event's store timings are observed.
func (h *Handler) sample() bool {
	h.events++
	return h.events%metrics.SampleEvery == 0
}

// refuseUnknown refuses an object of a type the cache keeps no kind of (counted under the
// kind "unknown").
func (h *Handler) refuseUnknown(op stores.Op, obj any) error {
	return h.rejectUnlocked("unknown", op, "<unknown>", fmt.Errorf("%w: the cache does not hold a %T", store.ErrInvalidObject, obj))
}
