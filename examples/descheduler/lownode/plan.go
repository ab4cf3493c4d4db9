// Package lownode is a descheduler sibling in the manner of the descheduler project's
// LowNodeUtilization: it classifies nodes by the CPU their pods request, and moves pods
// off the overused ones while an underused one has room for them. It plans on a fork of a
// cache snapshot: each move is tried there (the pod removed from its node and added to the
// target), so every later decision sees the earlier ones — a budget lowered by the pods
// already chosen, a gang with fewer members left, a target with less room — without
// touching the cache or the API. Only the plan's pods are then evicted.
package lownode

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Move is one pod the plan evicts: the overused node it leaves and the underused node the
// plan found room on (the scheduler decides where its replacement lands).
type Move struct {
	Pod      types.NamespacedName
	From, To string
}

// Plan returns the moves that bring the overused nodes down to s.High, most used node
// first, within s.MaxPerNode per node. A pod moves only if it is evictable (bound, owned
// by a controller that recreates it, not a DaemonSet's, mirror or critical pod), every
// budget that covers it still allows a disruption, every gang it belongs to keeps at least
// minMember active members, and an underused node has room for it without going over
// s.High. The fork is left with the moves applied (its caller may Revert it).
func Plan(f *multicache.Fork, acct store.Accounting, s Settings) []Move {
	var under, over []*store.NodeInfo
	for _, n := range f.NodeInfos() {
		if n.Node == nil || n.Node.Spec.Unschedulable || n.Allocatable.MilliCPU == 0 {
			continue
		}
		switch u := usedPercent(n); {
		case u < s.Low:
			under = append(under, n)
		case u > s.High:
			over = append(over, n)
		}
	}
	if len(under) == 0 || len(over) == 0 {
		return nil
	}
	slices.SortFunc(over, func(a, b *store.NodeInfo) int {
		return cmp.Or(cmp.Compare(usedPercent(b), usedPercent(a)), cmp.Compare(a.Name, b.Name))
	})
	targets := make([]string, len(under))
	for i, n := range under {
		targets[i] = n.Name
	}

	var moves []Move
	// gone counts, per gang, the members the plan moves: each is evicted and away until its
	// replacement runs, though the fork already has it on its target.
	gone := map[types.NamespacedName]int32{}
	for _, from := range over {
		moved := 0
		for _, ps := range candidates(f.PodsOnNode(from.Name), acct) {
			if n, _ := f.NodeInfo(from.Name); usedPercent(n) <= s.High || moved == s.MaxPerNode {
				break
			}
			pod := ps.Pod
			if !budgetsAllow(f, pod) || !gangsAllow(f, pod, gone) {
				continue
			}
			to := target(f, acct, pod, targets, s.High)
			if to == "" {
				continue
			}
			key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
			if f.RemovePod(key) != nil || f.AddPod(pod, to) != nil {
				continue // the cache moved on under the plan: leave this pod alone
			}
			for _, g := range f.PodGroupsForPod(pod) {
				gone[g.Key]++
			}
			moves = append(moves, Move{Pod: key, From: from.Name, To: to})
			moved++
		}
	}
	return moves
}

// usedPercent is the percent of the node's allocatable CPU its pods and placeholders request.
func usedPercent(n *store.NodeInfo) int {
	if n == nil || n.Allocatable.MilliCPU == 0 {
		return 0
	}
	return int(n.Requested.MilliCPU * 100 / n.Allocatable.MilliCPU)
}

// candidates are the evictable pods of a node, the lowest priority first and, among
// equals, the largest CPU request first (fewest evictions to bring the node down).
func candidates(pods []store.PodStatus, acct store.Accounting) []store.PodStatus {
	out := slices.DeleteFunc(slices.Clone(pods), func(ps store.PodStatus) bool { return !evictable(ps) })
	slices.SortFunc(out, func(a, b store.PodStatus) int {
		return cmp.Or(
			cmp.Compare(corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)),
			cmp.Compare(acct.PodRequests(b.Pod).MilliCPU, acct.PodRequests(a.Pod).MilliCPU),
			cmp.Compare(a.Pod.Name, b.Pod.Name))
	})
	return out
}

// criticalPriority is system-cluster-critical's: pods at or above it are never evicted.
const criticalPriority = 2000000000

// evictable: bound and known to the API (not assumed), running or about to, not being
// deleted, controlled by something that recreates it other than a DaemonSet (whose pod
// would come back on the same node), and neither a mirror pod nor a critical one.
func evictable(ps store.PodStatus) bool {
	pod := ps.Pod
	if ps.State != store.PodAdded || pod.DeletionTimestamp != nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror || corev1helpers.PodPriority(pod) >= criticalPriority {
		return false
	}
	for _, o := range pod.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.Kind != "DaemonSet"
		}
	}
	return false // a bare pod would not come back
}

// budgetsAllow: every budget covering the pod allows one more disruption, counting the
// pods the plan already removed on the fork.
func budgetsAllow(f *multicache.Fork, pod *corev1.Pod) bool {
	for _, b := range f.PDBsForPod(pod) {
		if b.AllowedDisruptions < 1 {
			return false
		}
	}
	return true
}

// gangsAllow: every gang the pod belongs to keeps minMember active members without it and
// without the members the plan already moves (gone).
func gangsAllow(f *multicache.Fork, pod *corev1.Pod, gone map[types.NamespacedName]int32) bool {
	for _, g := range f.PodGroupsForPod(pod) {
		if g.MinMember() > 0 && g.Counts.Active()-gone[g.Key]-1 < g.MinMember() {
			return false
		}
	}
	return true
}

// target is the first of the underused nodes the pod may run on (node affinity and
// selector, taints) where its requests fit and leave the node at most high percent used;
// "" when none.
func target(f *multicache.Fork, acct store.Accounting, pod *corev1.Pod, nodes []string, high int) string {
	req := acct.PodRequests(pod)
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, name := range nodes {
		n, ok := f.NodeInfo(name)
		if !ok || n.Node == nil {
			continue
		}
		if ok, _ := affinity.Match(n.Node); !ok {
			continue
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Node.Spec.Taints, pod.Spec.Tolerations,
			func(t *corev1.Taint) bool { return t.Effect != corev1.TaintEffectPreferNoSchedule }, false); untolerated {
			continue
		}
		after := n.Requested.Clone()
		after.Add(req)
		if after.MilliCPU*100 > int64(high)*n.Allocatable.MilliCPU || after.Memory > n.Allocatable.Memory ||
			(n.Allocatable.Pods > 0 && int64(len(f.PodsOnNode(name)))+1 > n.Allocatable.Pods) {
			continue
		}
		return name
	}
	return ""
}
