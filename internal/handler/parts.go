package handler

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// What reads the whole cache (the invariant check, the comparison's versions, the dump)
// does not hold the read lock for all of it: at 150,000 pods one hold lasted 0.2-0.4 s, and
// every pod event waited that long. It reads in parts, each under its own short hold, and
// pod events are applied between two parts.
const (
	// nodesPerHold nodes are read per hold (a node holds about 30 pods).
	nodesPerHold = 100
	// podsPerHold pods are read per hold.
	podsPerHold = 4000
	// The invariant check does more per node and per pod under the lock (every charged
	// pod's entry looked up, every entry checked): a quarter as many per hold keeps its
	// holds as short as the others' (a label update waited up to 9 ms for one of 4,000
	// pods in BenchmarkDumpLag's "verify").
	checkNodesPerHold = nodesPerHold / 4
	checkPodsPerHold  = podsPerHold / 4
)

// rangeNodesIn calls fn with the node infos of every node, size per hold of the read lock
// (fn runs with it held), and released (when not nil) each time it let the lock go. A node
// added while it runs may be left out; one deleted before its part is.
func (h *Handler) rangeNodesIn(size int, fn func(infos []*store.NodeInfo), released func()) {
	h.mu.RLock()
	names := h.nodes.Names()
	h.mu.RUnlock()
	var use func() error
	if released != nil {
		use = func() error { released(); return nil }
	}
	_ = h.nodesInParts(size, names, fn, use)
}

// nodesInParts calls copy with the infos of the nodes named, size per hold of the read lock,
// and then, the lock released, use (nil: nothing); it stops at use's first error. A node
// deleted before its part is left out.
func (h *Handler) nodesInParts(size int, names []string, copy func(infos []*store.NodeInfo), use func() error) error {
	infos := make([]*store.NodeInfo, 0, min(size, len(names)))
	return inParts(h, names, size, func(chunk []string) {
		infos = infos[:0]
		for _, name := range chunk {
			if info, ok := h.nodes.Get(name); ok {
				infos = append(infos, info)
			}
		}
		copy(infos)
	}, use)
}

// podsInParts calls copy for the entry of every pod of keys, podsPerHold per hold of the
// read lock, and then, the lock released, use; it stops at use's first error. A pod deleted
// before its part is left out.
func (h *Handler) podsInParts(keys []types.NamespacedName, copy func(types.NamespacedName, *podstore.Entry), use func() error) error {
	return inParts(h, keys, podsPerHold, func(chunk []types.NamespacedName) {
		for _, key := range chunk {
			if e, ok := h.pods.Entry(key); ok {
				copy(key, e)
			}
		}
	}, use)
}

// inParts calls copy with each chunk of size keys under a hold of the read lock of its own,
// then use (when not nil) with the lock released; it stops at use's first error.
func inParts[K any](h *Handler, keys []K, size int, copy func([]K), use func() error) error {
	for chunk := range slices.Chunk(keys, size) {
		h.mu.RLock()
		copy(chunk)
		h.mu.RUnlock()
		if use != nil {
			if err := use(); err != nil {
				return err
			}
		}
		h.partDone()
	}
	return nil
}

// podKeys returns the key of every pod once, read in parts (rangePods), sorted as their
// "namespace/name" renderings sort (the order encoding/json gives a map keyed by them).
func (h *Handler) podKeys() []types.NamespacedName {
	h.mu.RLock()
	keys := make([]types.NamespacedName, 0, h.pods.Len())
	h.mu.RUnlock()
	h.rangePods(podsPerHold, func(key types.NamespacedName, _ *podstore.Entry) {
		keys = append(keys, key)
	}, nil)
	slices.SortFunc(keys, stores.CompareKeys)
	// A pod deleted and added again between two parts may have been read twice.
	return slices.Compact(keys)
}

// rangePods calls fn for every pod entry with the read lock held, and lets the lock go and
// takes it again every size entries so that waiting events are applied. The PodStore
// is ranged over as a Go map, which tolerates changes between two steps of the range (the
// language's rule for a map changed during a range: an entry removed before it is reached is
// not produced, an entry added may or may not be); the lock makes each step see a whole
// state. So each entry is read whole, but a pod deleted and added again meanwhile may be
// produced twice and one added may be missed: callers key what they collect and tolerate
// both. It takes size pods per hold and calls released (when not nil) each time it has let
// the lock go, after every part and after the last: what fn copied is used there, without
// the lock.
func (h *Handler) rangePods(size int, fn func(types.NamespacedName, *podstore.Entry), released func()) {
	h.mu.RLock()
	n := 0
	h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
		fn(key, e)
		if n++; n%size == 0 {
			h.mu.RUnlock()
			if released != nil {
				released()
			}
			h.partDone()
			h.mu.RLock()
		}
		return true
	})
	h.mu.RUnlock()
	if released != nil {
		released()
	}
}

// partDone runs the test hook between two parts.
func (h *Handler) partDone() {
	if h.afterPart != nil {
		h.afterPart()
	}
}
