package nodestore

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// CheckInvariants implements stores.Store. For every node: requested equals the sum of its
// guaranteed pods plus its placeholders, best-effort requested the sum of its best-effort
// pods, reserved the sum of its placeholders; the pools follow the merge rule; every pod is
// bound there and not terminal; something still refers to the node. Across nodes: no pod
// is on two nodes; the remembered charge of every pod is its requests, and there is one
// for each pod held, no more.
func (s *Store) CheckInvariants() []error {
	var errs []error
	seen := map[types.NamespacedName]string{}
	held := 0
	s.Range(func(info *stores.NodeInfo) bool {
		for _, list := range [][]*corev1.Pod{info.Pods, info.Placeholders} {
			for _, p := range list {
				held++
				if c, ok := s.charges[p]; !ok || !c.Equal(stores.PodRequests(p)) {
					errs = append(errs, fmt.Errorf("node %s: pod %s was charged %v (remembered: %v), its requests are %v",
						info.Name, stores.PodKey(p), c.ResourceList(), ok, stores.PodRequests(p).ResourceList()))
				}
			}
		}
		var requested, bestEffort, reserved stores.Resources
		for _, p := range info.Pods {
			key := stores.PodKey(p)
			if other, dup := seen[key]; dup {
				errs = append(errs, fmt.Errorf("node %s: pod %s is also on node %s", info.Name, key, other))
			}
			seen[key] = info.Name
			if p.Spec.NodeName != info.Name {
				errs = append(errs, fmt.Errorf("node %s: pod %s is bound to %q", info.Name, key, p.Spec.NodeName))
			}
			if stores.IsTerminal(p) {
				errs = append(errs, fmt.Errorf("node %s: terminal pod %s is still charged", info.Name, key))
			}
			if stores.IsBestEffort(p) {
				bestEffort.Add(stores.PodRequests(p))
			} else {
				requested.Add(stores.PodRequests(p))
			}
		}
		for _, p := range info.Placeholders {
			req := stores.PodRequests(p)
			requested.Add(req)
			reserved.Add(req)
		}
		for _, c := range []struct {
			what      string
			got, want stores.Resources
		}{
			{"requested", info.Requested, requested},
			{"best-effort requested", info.BestEffortRequested, bestEffort},
			{"reserved", info.Reserved, reserved},
		} {
			if !c.got.Equal(c.want) {
				errs = append(errs, fmt.Errorf("node %s: %s is %v, its pods sum to %v", info.Name, c.what, c.got.ResourceList(), c.want.ResourceList()))
			}
		}
		alloc, capacity, be := MergedPools(info.Node, info.NMNode, info.CNR)
		if !alloc.Equal(info.Allocatable) || !capacity.Equal(info.Capacity) || !be.Equal(info.BestEffortAllocatable) {
			errs = append(errs, fmt.Errorf("node %s: pools do not follow the merge rule of its sources", info.Name))
		}
		if info.Node == nil && info.NMNode == nil && info.CNR == nil && len(info.Pods) == 0 && len(info.Placeholders) == 0 {
			errs = append(errs, fmt.Errorf("node %s: kept although nothing refers to it", info.Name))
		}
		if g := s.nodes.Generation(info.Name); g != info.Generation {
			errs = append(errs, fmt.Errorf("node %s: generation %d, the change list says %d", info.Name, info.Generation, g))
		}
		return true
	})
	if len(s.charges) != held {
		errs = append(errs, fmt.Errorf("%d charges remembered for the %d pods and placeholders held", len(s.charges), held))
	}
	return errs
}
