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
// increment, and every accepted event increments one. Only the operations a kind can be
// given are created (and so served at 0 before the first): a pod's lifecycle (assume,
// finish_binding, forget, expire), a claim's assumption and its forgetting, and add, update
// and delete for every kind. Half of the 84 pairs of every kind with every operation could
// never move, and each was gathered and written at every read of the family.
var okCounters = func() map[kindOp]prometheus.Counter {
	m := map[kindOp]prometheus.Counter{}
	objects := []stores.Op{stores.OpAdd, stores.OpUpdate, stores.OpDelete}
	opsOf := map[stores.Kind][]stores.Op{
		stores.KindPod:           append(objects, stores.OpAssume, stores.OpFinishBinding, stores.OpForget, stores.OpExpire),
		stores.KindResourceClaim: append(objects, stores.OpAssume, stores.OpForget),
	}
	for _, k := range []stores.Kind{stores.KindPod, stores.KindNode, stores.KindNMNode, stores.KindCNR, stores.KindPodGroup,
		stores.KindPDB, stores.KindOwner, stores.KindMovement, stores.KindReservation,
		stores.KindResourceSlice, stores.KindResourceClaim, stores.KindDeviceClass} {
		ops, ok := opsOf[k]
		if !ok {
			ops = objects
		}
		for _, op := range ops {
			m[kindOp{k, op}] = metrics.EventsTotal.WithLabelValues(string(k), string(op), "ok")
		}
	}
	return m
}()

// accept counts an applied event.
func (h *Handler) accept(kind stores.Kind, op stores.Op) {
	if c, ok := okCounters[kindOp{kind, op}]; ok {
		c.Inc()
		return
	}
	metrics.EventsTotal.WithLabelValues(string(kind), string(op), "ok").Inc()
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
