package handler

import (
	"context"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// ExpireAssumedPods expires every assumed pod whose binding finished PodAssumedTTL ago
// without the API confirming it, through PodOp: a delete everywhere, then, if the API had
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
			"pod", stores.PodKey(e.Pod), "node", e.Pod.Spec.NodeName, "deadline", e.Deadline)
	}
	return len(due)
}

// ReapReservations expires the reservations whose TTL ran out unmatched (see
// reservationstore.Store.ExpireDue) and returns the transitions; the status writer learns of
// them through CacheHandler.ObjectChanged.
func (h *Handler) ReapReservations() []reservationstore.Transition {
	rs, ok := lookup[reaper](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	transitions := rs.ExpireDue(h.config.Clock().Now())
	for _, t := range transitions {
		if t.Hold {
			h.log.Info("deleted pod's place released: no Reservation took it over within --reservation-ttl", "reservation", t.Key)
			continue
		}
		metrics.ReaperExpiredTotal.Inc()
		h.log.Info("reservation expired unmatched; placeholder released", "reservation", t.Key)
	}
	return transitions
}

// Start expires assumed pods and reaps reservations every Period until ctx is done; it is a
// manager.Runnable. The operator runs it on every replica: the cache must stay right on
// standbys too.
func (h *Handler) Start(ctx context.Context) error {
	ticker := h.config.Clock().NewTicker(h.config.Period())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.config.StopCh():
			return nil
		case <-ticker.C():
			h.ExpireAssumedPods()
			h.ReapReservations()
		}
	}
}

// NeedLeaderElection implements controller-runtime's LeaderElectionRunnable: every replica
// keeps its cache right, leader or not.
func (h *Handler) NeedLeaderElection() bool { return false }
