package handler

import (
	"context"
	"fmt"

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
// check never holds the read lock for all of it: the NodeStore and the PodStore are checked
// in parts (checkInParts), checkNodesPerHold nodes or checkPodsPerHold pods per hold, and what
// costs most (sums, recomputed requests) runs after the lock is released
// (stores.DeferredChecker). A part sees each node and each pod whole, but an event may come
// between two parts; so when the parts find anything, the whole check runs again under one
// hold of the lock (checkAtOnce) and its findings are the ones reported
// (multicache_invariant_rechecks_total counts how often, and whether it cleared the parts'
// findings). A healthy cache, the usual case, never takes the long hold. When the violations
// are confirmed, the stores that keep totals as events change them and found them wrong
// rebuild them from their objects (rebuildTotals): the miscount is reported once, not
// served until a restart.
func (h *Handler) CheckInvariants() []error {
	errs := h.checkInParts()
	if len(errs) > 0 {
		errs = h.checkAtOnce()
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

// rebuildTotals has, under the write lock, every stores.TotalsRebuilder whose last check
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

// checkAtOnce runs the whole check under one hold of the read lock (the costly part after
// it is released).
func (h *Handler) checkAtOnce() []error {
	h.mu.RLock()
	finish := h.checkLocked()
	h.mu.RUnlock()
	return finish()
}

// checkInParts checks the NodeStore and the PodStore in parts, each under its own hold of
// the read lock (rangeNodesIn, rangePods), and each other store under a hold of its own.
func (h *Handler) checkInParts() []error {
	var errs []error
	var later []func() []error
	for _, s := range h.stores {
		if s == store.Store(h.nodes) || s == store.Store(h.pods) {
			continue
		}
		h.mu.RLock()
		later = append(later, h.checkStoresLocked(func(other store.Store) bool { return other == s }))
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
	pace := yield.NewPacer(dumpDuty)
	rest := func() { _ = pace.Rest(context.Background()) }
	h.rangeNodesIn(checkNodesPerHold, func(infos []*store.NodeInfo) {
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
	h.rangePodsIn(checkPodsPerHold, func(key types.NamespacedName, e *podstore.Entry) {
		for _, err := range h.pods.CheckEntry(key, e) {
			errs = append(errs, fmt.Errorf("%s: %w", stores.PodStoreName, err))
		}
		if e.Pod == nil {
			return
		}
		chargeable := e.Pod.Spec.NodeName != "" && !store.IsTerminal(e.Pod)
		switch charged := h.nodes.Holds(e.Pod); {
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

// checkLocked runs, with the read lock held, the part of the check that reads the stores,
// and returns the rest.
func (h *Handler) checkLocked() func() []error {
	finishStores := h.checkStoresLocked(func(store.Store) bool { return true })
	podsOnNodes := h.checkPodsOnNodesDeferred()
	claims := h.checkAssumedClaimsLocked()
	return func() []error {
		return append(append(finishStores(), podsOnNodes()...), claims...)
	}
}

// checkStoresLocked runs, with the read lock held, the check of each store include accepts
// (the costly part of a stores.DeferredChecker is returned), and returns the rest.
func (h *Handler) checkStoresLocked(include func(store.Store) bool) func() []error {
	var errs []error
	type deferred struct {
		name   stores.Name
		finish func() []error
	}
	var later []deferred
	for _, s := range h.stores {
		if !include(s) {
			continue
		}
		if d, ok := s.(store.DeferredChecker); ok {
			later = append(later, deferred{s.Name(), d.CheckInvariantsDeferred()})
			continue
		}
		for _, err := range s.CheckInvariants() {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name(), err))
		}
	}
	return func() []error {
		for _, d := range later {
			for _, err := range d.finish() {
				errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
			}
		}
		return errs
	}
}

// podEntry is what the cross-store check copies of a PodStore entry.
type podEntry struct {
	key   types.NamespacedName
	pod   *corev1.Pod
	state store.PodState
}

// checkPodsOnNodesDeferred copies, under the lock, the pods charged to nodes and the
// PodStore's entries; the function it returns compares them.
func (h *Handler) checkPodsOnNodesDeferred() func() []error {
	var charged []*corev1.Pod
	h.nodes.Range(func(info *store.NodeInfo) bool {
		charged = append(charged, info.Pods...)
		return true
	})
	entries := make([]podEntry, 0, h.pods.Len())
	h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
		entries = append(entries, podEntry{key, e.Pod, e.State})
		return true
	})
	return func() []error {
		var errs []error
		onNodes := make(map[types.NamespacedName]*corev1.Pod, len(charged))
		for _, p := range charged {
			onNodes[store.PodKey(p)] = p
		}
		for _, e := range entries {
			chargeable := e.pod.Spec.NodeName != "" && !store.IsTerminal(e.pod)
			p, isCharged := onNodes[e.key]
			switch {
			case chargeable && !isCharged:
				errs = append(errs, fmt.Errorf("pod %s (%s) is not charged to node %s", e.key, e.state, e.pod.Spec.NodeName))
			case !chargeable && isCharged:
				errs = append(errs, fmt.Errorf("pod %s is charged to node %s but should not be", e.key, p.Spec.NodeName))
			case isCharged && p != e.pod:
				errs = append(errs, fmt.Errorf("pod %s: the node holds another copy than the pod store", e.key))
			}
			delete(onNodes, e.key)
		}
		for key, p := range onNodes {
			errs = append(errs, fmt.Errorf("pod %s is charged to node %s but unknown to the pod store", key, p.Spec.NodeName))
		}
		return errs
	}
}
