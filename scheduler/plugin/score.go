package plugin

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreScore implements fwk.PreScorePlugin: Score is skipped for a pod no reservation or
// hold may take.
func (p *Plugin) PreScore(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if s := p.cacheDown(); s != nil {
		return s
	}
	st := p.stateOf(cs, pod)
	cs.Write(stateKey, st)
	if len(st.preferred) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score implements fwk.ScorePlugin: the most to a node where a reservation or hold the pod
// may consume is (a replacement goes back to its kept place), nothing elsewhere.
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
