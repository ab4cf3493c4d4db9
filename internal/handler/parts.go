package handler

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
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
)

// rangeNodes calls fn with the node infos of every node, nodesPerHold per hold of the read
// lock (fn runs with it held). A node added while it runs may be left out; one deleted before
// its part is.
func (h *Handler) rangeNodes(fn func(infos []*stores.NodeInfo)) {
	h.mu.RLock()
	names := h.nodes.Names()
	h.mu.RUnlock()
	for chunk := range slices.Chunk(names, nodesPerHold) {
		h.mu.RLock()
		infos := make([]*stores.NodeInfo, 0, len(chunk))
		for _, name := range chunk {
			if info, ok := h.nodes.Get(name); ok {
				infos = append(infos, info)
			}
		}
		fn(infos)
		h.mu.RUnlock()
		h.partDone()
	}
}

// rangePods calls fn for every pod entry with the read lock held, and lets the lock go and
// takes it again every podsPerHold entries so that waiting events are applied. The PodStore
// is ranged over as a Go map, which tolerates changes between two steps of the range (the
// language's rule for a map changed during a range: an entry removed before it is reached is
// not produced, an entry added may or may not be); the lock makes each step see a whole
// state. So each entry is read whole, but a pod deleted and added again meanwhile may be
// produced twice and one added may be missed: callers key what they collect and tolerate
// both.
func (h *Handler) rangePods(fn func(types.NamespacedName, *podstore.Entry)) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
		fn(key, e)
		if n++; n%podsPerHold == 0 {
			h.mu.RUnlock()
			h.partDone()
			h.mu.RLock()
		}
		return true
	})
}

// partDone runs the test hook between two parts.
func (h *Handler) partDone() {
	if h.afterPart != nil {
		h.afterPart()
	}
}
