package handler

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// CheckInvariants asks every store to check itself and checks what spans stores: the pods
// charged to nodes are exactly the PodStore's bound, non-terminal pods, as the same objects;
// the claims a store marks assumed are exactly the handler's assumed claims.
// Violations are counted in multicache_invariant_violations_total and returned.
//
// At 150,000 pods one check reads every pod, and an event needs the write lock, so the
// check never holds the read lock for all of it (check): the NodeStore and the PodStore are
// read in parts, checkNodesPerHold nodes or checkPodsPerHold pods per hold, each other store
// under a hold of its own, and what costs most (sums, recomputed requests) runs after the
// lock is released (stores.DeferredChecker). Every finding but a pod on two nodes compares
// what one hold saw; that one an event between two parts of the nodes can make false (a pod
// deleted, then created on another node, is seen on two). So when the parts find anything,
// the check runs again with the nodes under one hold and the pods under one hold, and its
// findings are the ones reported (multicache_invariant_rechecks_total counts how often, and
// whether it cleared the parts' findings). A healthy cache, the usual case, never takes the
// long holds. When the violations are confirmed, the stores that keep totals as events
// change them and found them wrong rebuild them from their objects (rebuildTotals): the
// miscount is reported once, not served until a restart.
func (h *Handler) CheckInvariants() []error {
	errs := h.checkInParts()
	if len(errs) > 0 {
		errs = h.checkWhole()
		result := metrics.RecheckCleared
		if len(errs) > 0 {
			result = metrics.RecheckConfirmed
			h.rebuildTotals()
		}
		metrics.InvariantRechecksTotal.WithLabelValues(result).Inc()
	}
	metrics.InvariantViolationsTotal.Add(float64(len(errs)))
	return errs
}

// rebuildTotals has, under the write lock, every store.TotalsRebuilder whose last check
// found its totals wrong rebuild them from its objects; each rebuild is counted in
// multicache_kept_totals_rebuilt_total and logged with what it corrected.
func (h *Handler) rebuildTotals() {
	type rebuilt struct {
		store stores.Name
		fixed []string
	}
	var done []rebuilt
	h.mu.Lock()
	for _, s := range h.stores {
		if r, ok := s.(store.TotalsRebuilder); ok {
			if fixed := r.RebuildTotals(); len(fixed) > 0 {
				done = append(done, rebuilt{s.Name(), fixed})
			}
		}
	}
	h.mu.Unlock()
	for _, d := range done {
		metrics.KeptTotalsRebuiltTotal.WithLabelValues(string(d.store)).Inc()
		h.log.Info("a store's kept totals disagreed with a count of its objects; rebuilt them from the objects",
			"store", d.store, "corrections", d.fixed)
	}
}

// checkInParts is the usual check: short holds, resting between them.
func (h *Handler) checkInParts() []error {
	return h.check(checkNodesPerHold, checkPodsPerHold, yield.NewPacer(dumpDuty))
}

// checkWhole is the recheck: the nodes under one hold, the pods under one hold.
func (h *Handler) checkWhole() []error { return h.check(math.MaxInt, math.MaxInt, nil) }

// check runs the whole check, nodesEach nodes and podsEach pods per hold of the read lock,
// each other store under a hold of its own; between two parts it rests as pace says (nil:
// not at all).
func (h *Handler) check(nodesEach, podsEach int, pace *yield.Pacer) []error {
	var errs []error
	var later []func() []error
	for _, s := range h.stores {
		if s == store.Store(h.nodes) || s == store.Store(h.pods) {
			continue
		}
		h.mu.RLock()
		later = append(later, checkStoreLocked(s))
		h.mu.RUnlock()
	}
	h.mu.RLock()
	nodeCheck := h.nodes.BeginCheck()
	errs = append(errs, h.pods.CheckAssumedIndex()...)
	errs = append(errs, h.checkAssumedClaimsLocked()...)
	h.mu.RUnlock()

	// Between two parts the check rests as a dump does (dumpDuty): run back to back over
	// the whole cache it keeps a CPU busy, and on a machine whose CPUs are all taken the
	// event path waits for one.
	var rest func()
	if pace != nil {
		rest = func() { _ = pace.Rest(context.Background()) }
	}
	h.rangeNodesIn(nodesEach, func(infos []*store.NodeInfo) {
		nodeCheck.CopyNodes(infos, func(node string, p *corev1.Pod) {
			key := store.PodKey(p)
			switch e, ok := h.pods.Entry(key); {
			case !ok:
				errs = append(errs, fmt.Errorf("pod %s is charged to node %s but unknown to the pod store", key, node))
			case e.Pod != p:
				errs = append(errs, fmt.Errorf("pod %s: the node holds another copy than the pod store", key))
			}
		})
	}, rest)
	h.rangePods(podsEach, func(key types.NamespacedName, e *podstore.Entry) {
		for _, err := range h.pods.CheckEntry(key, e) {
			errs = append(errs, fmt.Errorf("%s: %w", stores.PodStoreName, err))
		}
		if e.Pod == nil {
			return
		}
		chargeable := e.Pod.Spec.NodeName != "" && !store.IsTerminal(e.Pod)
		// Charged by key: a node holding another copy is the node part's finding.
		switch charged := h.nodes.Holds(e.Pod) || h.nodes.HoldsKey(e.Pod.Spec.NodeName, key); {
		case chargeable && !charged:
			errs = append(errs, fmt.Errorf("pod %s (%s) is not charged to node %s", key, e.State, e.Pod.Spec.NodeName))
		case !chargeable && charged:
			errs = append(errs, fmt.Errorf("pod %s is charged to node %s but should not be", key, e.Pod.Spec.NodeName))
		}
	}, rest)
	for _, err := range nodeCheck.Finish() {
		errs = append(errs, fmt.Errorf("%s: %w", stores.NodeStoreName, err))
	}
	for _, finish := range later {
		errs = append(errs, finish()...)
	}
	return errs
}

// checkStoreLocked runs, with the read lock held, the check of s (the costly part of a
// stores.DeferredChecker is returned), and returns the rest.
func checkStoreLocked(s store.Store) func() []error {
	named := func(errs []error) []error {
		for i, err := range errs {
			errs[i] = fmt.Errorf("%s: %w", s.Name(), err)
		}
		return errs
	}
	if d, ok := s.(store.DeferredChecker); ok {
		finish := d.CheckInvariantsDeferred()
		return func() []error { return named(finish()) }
	}
	errs := named(s.CheckInvariants())
	return func() []error { return errs }
}
