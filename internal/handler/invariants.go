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
// Violations are counted in multicache_invariant_violations_total and returned.
func (h *Handler) CheckInvariants() []error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var errs []error
	for _, s := range h.stores {
		for _, err := range s.CheckInvariants() {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name(), err))
		}
	}
	errs = append(errs, h.checkPodsOnNodes()...)
	metrics.InvariantViolationsTotal.Add(float64(len(errs)))
	return errs
}

func (h *Handler) checkPodsOnNodes() []error {
	var errs []error
	onNodes := map[types.NamespacedName]*corev1.Pod{}
	h.nodes.Range(func(info *stores.NodeInfo) bool {
		for _, p := range info.Pods {
			onNodes[stores.PodKey(p)] = p
		}
		return true
	})
	h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
		chargeable := e.Pod.Spec.NodeName != "" && !stores.IsTerminal(e.Pod)
		p, charged := onNodes[key]
		switch {
		case chargeable && !charged:
			errs = append(errs, fmt.Errorf("pod %s (%s) is not charged to node %s", key, e.State, e.Pod.Spec.NodeName))
		case !chargeable && charged:
			errs = append(errs, fmt.Errorf("pod %s is charged to node %s but should not be", key, p.Spec.NodeName))
		case charged && p != e.Pod:
			errs = append(errs, fmt.Errorf("pod %s: the node holds another copy than the pod store", key))
		}
		delete(onNodes, key)
		return true
	})
	for key, p := range onNodes {
		errs = append(errs, fmt.Errorf("pod %s is charged to node %s but unknown to the pod store", key, p.Spec.NodeName))
	}
	return errs
}
