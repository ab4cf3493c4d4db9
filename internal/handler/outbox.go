package handler

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// outboxAfter returns what runs after every call the handler makes into s: applying what s
// asked for during it (applyOutbox); nil when s has no Outbox.
func (h *Handler) outboxAfter(s store.Store) func() {
	src, ok := s.(stores.OutboxSource)
	if !ok {
		return nil
	}
	name := s.Name()
	return func() { h.applyOutbox(name, src) }
}

// applyOutbox applies what the store from asked for during one call. The order is the rule
// every placeholder follows:
//
//   - right after that call returns, before the event goes on to the next store in
//     FanOutOrder, so the stores after the asking one see the placeholder first;
//   - in the order asked (a placeholder released and charged again within one call ends
//     charged);
//   - to every store but the asking one and the PodStore: a placeholder is no pod of the
//     API.
//
// The changed objects go to the status writers (SetStatusNotifier), which queue them and
// never block. The caller holds the lock.
func (h *Handler) applyOutbox(from stores.Name, src stores.OutboxSource) {
	ops, changed := src.TakeOutbox()
	for _, op := range ops {
		h.podOp(op.Pod, op.Add, from, stores.PodStoreName)
	}
	if h.statusChanged == nil {
		return
	}
	for _, c := range changed {
		h.statusChanged(c.Kind, c.Key)
	}
}

// SetStatusNotifier sets where the objects whose derived status changed go (the status
// writers' queue). Called once, before any event; fn is called under the handler lock and
// must not block.
func (h *Handler) SetStatusNotifier(fn func(kind stores.Kind, key types.NamespacedName)) {
	h.statusChanged = fn
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

// takeOutbox applies what s asked for during a call the handler made outside the fan-out
// (a deleted pod's hold, the clock's expiries).
func (h *Handler) takeOutbox(s store.Store) {
	if after := h.outboxAfter(s); after != nil {
		after()
	}
}
