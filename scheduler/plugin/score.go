package plugin

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreScore implements fwk.PreScorePlugin: it adds the nodes where a terminating pod's place
// is to be kept for the pod (its controller replaced it as soon as its deletion was asked
// for, before any hold exists), and skips Score for a pod no reservation or hold may take.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if s := p.cacheDown(); s != nil {
		return s
	}
	st := p.stateOf(cs, pod)
	if metav1.GetControllerOfNoCopy(pod) != nil {
		p.preferLeaving(st, pod, nodes)
	}
	cs.Write(stateKey, st)
	if len(st.preferred) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// preferLeaving marks preferred the nodes among nodes where a pod is going whose place the
// cache is to keep for pod.
func (p *Plugin) preferLeaving(st *podState, pod *corev1.Pod, nodes []fwk.NodeInfo) {
	for _, n := range nodes {
		node := n.Node()
		if node == nil || st.preferred[node.Name] || !p.leavesPlaceFor(pod, n, st) {
			continue
		}
		if st.preferred == nil {
			st.preferred = map[string]bool{}
		}
		st.preferred[node.Name] = true
	}
}

// leavesPlaceFor reports whether a pod going from the node of n leaves its place to pod: one
// that terminates there, or one the scheduler saw leave and the cache still holds (Filter
// let pod there for it). Only going pods of pod's namespace are asked about.
func (p *Plugin) leavesPlaceFor(pod *corev1.Pod, n fwk.NodeInfo, st *podState) bool {
	node := n.Node().Name
	if gone := p.lagging(node, n, st); gone != nil && gone.Namespace == pod.Namespace &&
		p.takesPlaceOf(pod, gone, st.requests, func() bool { return p.soleUnknown(node, n, st, gone) }) {
		return true
	}
	for _, pi := range n.GetPods() {
		leaving := pi.GetPod()
		if leaving.DeletionTimestamp != nil && leaving.Namespace == pod.Namespace && p.reader.KeepsPlaceFor(leaving, pod) {
			return true
		}
	}
	return false
}

// Score implements fwk.ScorePlugin: the most to a node where a reservation or hold the pod
// may consume is, or a terminating pod whose place is to be kept for it (a replacement goes
// back to its kept place), nothing elsewhere.
func (p *Plugin) Score(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	if p.stateOf(cs, pod).preferred[node.Name] {
		return fwk.MaxNodeScore, nil
	}
	return 0, nil
}

// ScoreExtensions implements fwk.ScorePlugin: scores are already 0 or the maximum.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
