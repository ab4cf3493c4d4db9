package handler

import "k8s.io/apimachinery/pkg/types"

// ReservationHolds returns the keys of the deleted pods' holds (reserve-on-delete) that no
// Reservation took over yet; Reservation(key) tells what each holds. The leader's
// replacement controller creates their Reservations.
func (h *Handler) ReservationHolds() []types.NamespacedName {
	if h.reservations == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.reservations.Holds()
}
