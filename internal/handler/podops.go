package handler

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// podOpsAfter returns what runs after every call the handler makes into s: applying the
// synthetic pod events s asked for during it (applyPodOps); nil when s asks for none.
func (h *Handler) podOpsAfter(s store.Store) func() {
	src, ok := s.(stores.PodOpSource)
	if !ok {
		return nil
	}
	name := s.Name()
	return func() { h.applyPodOps(name, src.TakePodOps()) }
}

// applyPodOps applies the synthetic pod events (placeholders) the store from asked for
// during one call. The order is the rule every placeholder follows:
//
//   - right after that call returns, before the event goes on to the next store in
//     FanOutOrder, so the stores after the asking one see the placeholder first;
//   - in the order asked (a placeholder released and charged again within one call ends
//     charged);
//   - to every store but the asking one and the PodStore: a placeholder is no pod of the
//     API.
//
// The caller holds the lock.
func (h *Handler) applyPodOps(from stores.Name, ops []stores.PodOp) {
	for _, op := range ops {
		h.podOp(op.Pod, op.Add, from, stores.PodStoreName)
	}
}

// then1 returns f followed by after (f itself when after is nil).
func then1[T any](f func(T), after func()) func(T) {
	if after == nil {
		return f
	}
	return func(x T) { f(x); after() }
}

// then2 is then1 for a two-argument f.
func then2[T any](f func(T, T), after func()) func(T, T) {
	if after == nil {
		return f
	}
	return func(x, y T) { f(x, y); after() }
}

// takePodOps applies what s asked for during a call the handler made outside the fan-out
// (a deleted pod's hold, the clock's expiries).
func (h *Handler) takePodOps(s store.Store) {
	if after := h.podOpsAfter(s); after != nil {
		after()
	}
}
