package handler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
)

// CheckInvariants asks every store to check itself and checks what spans stores: the pods
// charged to nodes are exactly the PodStore's bound, non-terminal pods, as the same objects.
// Violations are counted in multicache_invariant_violations_total and returned. The read
// lock is held only while the stores copy what their checks need (stores.DeferredChecker):
// the rest runs after it is released, so that events keep being applied.
func (h *Handler) CheckInvariants() []error {
	h.mu.RLock()
	finish := h.checkLocked()
	h.mu.RUnlock()
	errs := finish()
	metrics.InvariantViolationsTotal.Add(float64(len(errs)))
	return errs
}

// checkLocked runs, with the read lock held, the part of the check that reads the stores,
// and returns the rest.
func (h *Handler) checkLocked() func() []error {
	var errs []error
	type deferred struct {
		name   stores.Name
		finish func() []error
	}
	var later []deferred
	for _, s := range h.stores {
		if d, ok := s.(stores.DeferredChecker); ok {
			later = append(later, deferred{s.Name(), d.CheckInvariantsDeferred()})
			continue
		}
		for _, err := range s.CheckInvariants() {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name(), err))
		}
	}
	podsOnNodes := h.checkPodsOnNodesDeferred()
	return func() []error {
		for _, d := range later {
			for _, err := range d.finish() {
				errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
			}
		}
		return append(errs, podsOnNodes()...)
	}
}

// podEntry is what the cross-store check copies of a PodStore entry.
type podEntry struct {
	key   types.NamespacedName
	pod   *corev1.Pod
	state stores.PodState
}

// checkPodsOnNodesDeferred copies, under the lock, the pods charged to nodes and the
// PodStore's entries; the function it returns compares them.
func (h *Handler) checkPodsOnNodesDeferred() func() []error {
	var charged []*corev1.Pod
	h.nodes.Range(func(info *stores.NodeInfo) bool {
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
			onNodes[stores.PodKey(p)] = p
		}
		for _, e := range entries {
			chargeable := e.pod.Spec.NodeName != "" && !stores.IsTerminal(e.pod)
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
