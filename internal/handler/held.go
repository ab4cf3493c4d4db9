package handler

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// RoomHeldFrom returns, by node, the room Reserved reservations and deleted pods' holds
// keep that pod may not consume (reservationstore.Store.HeldFrom); nil when the
// reservation store is disabled.
func (h *Handler) RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources {
	s, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok || pod == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.HeldFrom(pod)
}

// KeepsPlaceFor reports whether the place of leaving, a pod that is going from its node, is
// to be kept for pod once the cache sees it gone (reservationstore.Store.KeepsPlaceFor); false when
// the reservation store is off.
func (h *Handler) KeepsPlaceFor(leaving, pod *corev1.Pod) bool {
	rs, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return rs.KeepsPlaceFor(leaving, pod)
}
