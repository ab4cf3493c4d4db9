package handler

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// ReservationHolds returns the keys of the deleted pods' holds (reserve-on-delete) that no
// Reservation took over yet; Reservation(key) tells what each holds. The leader's
// replacement controller creates their Reservations.
func (h *Handler) ReservationHolds() []types.NamespacedName {
	h.mu.RLock()
	defer h.mu.RUnlock()
	rs, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	return rs.Holds()
}
