package handler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// rejectionKey identifies a kind of rejection, so that each is logged once at info level.
type rejectionKey struct {
	kind   stores.Kind
	op     stores.Op
	reason string
}

type kindOp struct {
	kind stores.Kind
	op   stores.Op
}

// okCounters caches the "ok" children of EventsTotal: resolving labels costs more than the
// increment, and every accepted event increments one.
var okCounters = func() map[kindOp]prometheus.Counter {
	m := map[kindOp]prometheus.Counter{}
	for _, k := range []stores.Kind{stores.KindPod, stores.KindNode, stores.KindNMNode, stores.KindCNR, stores.KindPodGroup,
		stores.KindPDB, stores.KindOwner, stores.KindMovement, stores.KindReservation,
		stores.KindResourceSlice, stores.KindResourceClaim, stores.KindDeviceClass} {
		for _, op := range []stores.Op{stores.OpAdd, stores.OpUpdate, stores.OpDelete, stores.OpAssume,
			stores.OpFinishBinding, stores.OpForget, stores.OpExpire} {
			m[kindOp{k, op}] = metrics.EventsTotal.WithLabelValues(string(k), string(op), "ok")
		}
	}
	return m
}()

// accept counts an applied event.
func (h *Handler) accept(kind stores.Kind, op stores.Op) {
	okCounters[kindOp{kind, op}].Inc()
}

// reject counts and logs a rejected event and returns its typed error. Called with the lock
// held (it guards the log-once set).
func (h *Handler) reject(kind stores.Kind, op stores.Op, key string, err error) error {
	reason := stores.Reason(err)
	metrics.EventsTotal.WithLabelValues(string(kind), string(op), reason).Inc()
	rk := rejectionKey{kind, op, reason}
	log := h.log.V(1)
	if !h.rejections[rk] {
		h.rejections[rk] = true
		log = h.log
	}
	log.Info("rejected cache event; no store changed", "kind", kind, "op", op, "key", key, "reason", reason, "error", err.Error())
	return &stores.EventError{Kind: kind, Op: op, Key: key, Err: err}
}

// rejectUnlocked is reject for events refused before the lock is taken.
func (h *Handler) rejectUnlocked(kind stores.Kind, op stores.Op, key string, err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reject(kind, op, key, err)
}
