package plugin

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// stateKey is where PreFilter leaves what the cache says about the pod being scheduled.
const stateKey fwk.StateKey = Name

// ReasonHeld is the reason Filter gives for a node whose free room is kept for others.
const ReasonHeld = "node(s) had room kept by reservations or deleted pods' holds for other pods"

// podState is what the cache says about one pod, read once per scheduling cycle.
type podState struct {
	// held is, by node, the room reservations and holds keep there that the pod may not use.
	held map[string]store.Resources
	// preferred are the nodes where a reservation or hold the pod may consume is, or (from
	// PreScore) a terminating pod whose place is to be kept for it.
	preferred map[string]bool
	// requests are the pod's requests, as multicache charges them.
	requests store.Resources
	// removed are the pods preemption's what-ifs took off nodes (PreFilterExtensions).
	removed map[types.UID]bool
}

// Clone implements fwk.StateData: removed changes after PreFilter (preemption's what-ifs,
// on clones), preferred in PreScore (no clone is made after Filter succeeded).
func (s *podState) Clone() fwk.StateData {
	c := *s
	c.removed = maps.Clone(s.removed)
	return &c
}

// readPod asks the cache about pod: two read-locked queries.
func (p *Plugin) readPod(pod *corev1.Pod) *podState {
	st := &podState{held: p.reader.RoomHeldFrom(pod), requests: store.Accounting{}.PodRequests(pod)}
	for _, r := range p.reader.MatchableReservations(pod) {
		if r.Node != "" {
			if st.preferred == nil {
				st.preferred = map[string]bool{}
			}
			st.preferred[r.Node] = true
		}
	}
	return st
}

// stateOf returns PreFilter's state, or reads it anew (an extension point run without it).
func (p *Plugin) stateOf(cs fwk.CycleState, pod *corev1.Pod) *podState {
	if d, err := cs.Read(stateKey); err == nil {
		if st, ok := d.(*podState); ok {
			return st
		}
	}
	return p.readPod(pod)
}

// PreFilter implements fwk.PreFilterPlugin: it reads the room held from the pod and brings
// the plugin's snapshot of the cache up to date for Filter.
func (p *Plugin) PreFilter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if s := p.cacheDown(); s != nil {
		return nil, s
	}
	if err := p.reader.UpdateSnapshot(p.snap); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("updating the snapshot of multicache: %w", err))
	}
	cs.Write(stateKey, p.readPod(pod))
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin: preemption's what-ifs tell which pods
// they take off a node, so that Filter does not take them for pods the cache still holds.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// AddPod implements fwk.PreFilterExtensions.
func (p *Plugin) AddPod(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, added fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	st := p.stateOf(cs, pod)
	delete(st.removed, added.GetPod().UID)
	return nil
}

// RemovePod implements fwk.PreFilterExtensions.
func (p *Plugin) RemovePod(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, removed fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	st := p.stateOf(cs, pod)
	if st.removed == nil {
		st.removed = map[types.UID]bool{}
	}
	st.removed[removed.GetPod().UID] = true
	return nil
}

// Filter implements fwk.FilterPlugin: a node where the cache still holds a pod the
// scheduler saw leave is not used until the cache caught up (its place may be about to be
// kept: the pod is tried again within a second), unless that place is to be kept for the
// pod itself; on a node where room is held from the pod, the pod
// fits only if it fits beside what the node's pods request (kube-scheduler's count,
// assumed pods included) plus what is held.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	st := p.stateOf(cs, pod)
	if gone := p.lagging(node.Name, nodeInfo, st); gone != nil {
		sole := func() bool { return p.soleUnknown(node.Name, nodeInfo, st, gone) }
		if s := p.laggingStatus(pod, gone, st.requests, sole); s != nil {
			return s
		}
	}
	held, ok := st.held[node.Name]
	if !ok {
		return nil
	}
	if short := shortOf(nodeInfo, st.requests, held); short != "" {
		p.turnedAway(node.Name, pod)
		return fwk.NewStatus(fwk.Unschedulable, ReasonHeld, short)
	}
	return nil
}

// shortOf names the first resource the node lacks for requests once held is kept: "" when
// the pod fits. Only resources the held room takes are checked; the others are
// NodeResourcesFit's.
func shortOf(nodeInfo fwk.NodeInfo, requests, held store.Resources) string {
	alloc, used := nodeInfo.GetAllocatable(), nodeInfo.GetRequested()
	checks := []roomCheck{
		{corev1.ResourceCPU, alloc.GetMilliCPU(), used.GetMilliCPU(), requests.MilliCPU, held.MilliCPU},
		{corev1.ResourceMemory, alloc.GetMemory(), used.GetMemory(), requests.Memory, held.Memory},
		{corev1.ResourceEphemeralStorage, alloc.GetEphemeralStorage(), used.GetEphemeralStorage(), requests.EphemeralStorage, held.EphemeralStorage},
		{corev1.ResourcePods, int64(alloc.GetAllowedPodNumber()), int64(len(nodeInfo.GetPods())), 1, held.Pods},
	}
	for name, h := range held.Scalar {
		checks = append(checks, roomCheck{name, alloc.GetScalarResources()[name], used.GetScalarResources()[name], requests.Scalar[name], h})
	}
	for _, c := range checks {
		if c.held > 0 && c.requested > 0 && c.used+c.requested+c.held > c.allocatable {
			return fmt.Sprintf("%s: %d requested, %d kept for others, %d allocatable", c.name, c.used+c.requested, c.held, c.allocatable)
		}
	}
	return ""
}

// roomCheck is one resource of a node: what it has, what its pods use, what the pod asks
// and what is held from it.
type roomCheck struct {
	name                               corev1.ResourceName
	allocatable, used, requested, held int64
}
