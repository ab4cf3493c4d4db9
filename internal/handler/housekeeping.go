package handler

import (
	"context"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ExpireAssumedPods expires every assumed pod whose binding finished PodAssumedTTL ago
// without the API confirming it, through podOp: a delete everywhere, then, if the API had
// reported the pod before it was bound, an add of that copy. It returns how many expired.
func (h *Handler) ExpireAssumedPods() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.config.Clock().Now()
	due := h.pods.DueForExpiry(now)
	for _, e := range due {
		h.podOp(e.Pod, false)
		if e.APIPod != nil {
			h.podOp(e.APIPod, true)
		}
		metrics.ExpiredPodsTotal.Inc()
		h.accept(stores.KindPod, stores.OpExpire)
		h.log.Info("assumed pod expired: binding finished but the API never confirmed it",
			"pod", store.PodKey(e.Pod), "node", e.Pod.Spec.NodeName, "deadline", e.Deadline)
	}
	return len(due)
}

// DropDueHolds drops the deleted pods' holds whose deadline passed with no Reservation
// taking them over (see reservationstore.Store.DropDueHolds) and returns what ended. Every
// replica runs it: a hold is in-process, like an assumed pod.
func (h *Handler) DropDueHolds() []reservationstore.Transition {
	rs, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ended := rs.DropDueHolds(h.config.Clock().Now())
	h.takeOutbox(rs)
	for _, t := range ended {
		if t.To == v1alpha1.ReservationMatched {
			h.log.Info("deleted pod's hold ended: its replacement holds the place", "reservation", t.Key)
			continue
		}
		h.log.Info("deleted pod's place released: no Reservation took it over within --reservation-ttl", "reservation", t.Key)
	}
	return ended
}

// ReapReservations expires the reservations whose TTL ran out unmatched (see
// reservationstore.Store.ExpireDue) and returns the transitions; the status writer learns of
// them through the store's Outbox. Only the leader runs it (StartReaper): the
// other replicas apply the expiry its status records.
func (h *Handler) ReapReservations() []reservationstore.Transition {
	rs, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	transitions := rs.ExpireDue(h.config.Clock().Now())
	h.takeOutbox(rs)
	for _, t := range transitions {
		metrics.ReaperExpiredTotal.Inc()
		h.log.Info("reservation expired unmatched; placeholder released", "reservation", t.Key)
	}
	return transitions
}

// StartExpiry expires assumed pods and drops due holds every Period until ctx is done. The
// operator runs it on every replica (manager.Runnable, not leader-elected): both are
// in-process state the cache must keep right on standbys too.
func (h *Handler) StartExpiry(ctx context.Context) error {
	return h.every(ctx, func() {
		h.ExpireAssumedPods()
		h.DropDueHolds()
	})
}

// StartReaper reaps reservations every Period until ctx is done. The operator runs it on
// the leader only (from a caught-up cache): a reservation's expiry is the leader's
// decision. A standby that takes over starts it then; deadlines already past expire at its
// first tick.
func (h *Handler) StartReaper(ctx context.Context) error {
	return h.every(ctx, func() { h.ReapReservations() })
}

// every calls fn every Period until ctx is done or the handler stops.
func (h *Handler) every(ctx context.Context, fn func()) error {
	ticker := h.config.Clock().NewTicker(h.config.Period())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.config.StopCh():
			return nil
		case <-ticker.C():
			fn()
		}
	}
}
