package plugin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// assumedKey is where Reserve leaves the pod it assumed into the cache.
const assumedKey fwk.StateKey = Name + "/assumed"

// assumedPod is the copy of the pod the cache was handed (it owns it from then on).
type assumedPod struct{ pod *corev1.Pod }

// Clone implements fwk.StateData.
func (a *assumedPod) Clone() fwk.StateData { return a }

// Reserve implements fwk.ReservePlugin: the pod is assumed into the cache on its node, so
// that every reader (the next pod's Filter, a gang's Permit, the status writers) sees the
// room taken and the reservation matched before the API binds it.
func (p *Plugin) Reserve(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) *fwk.Status {
	if s := p.cacheDown(); s != nil {
		return s
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = nodeName
	if err := p.assumer.AssumePod(assumed); err != nil {
		return fwk.AsStatus(fmt.Errorf("assuming the pod into multicache on %s: %w", nodeName, err))
	}
	cs.Write(assumedKey, &assumedPod{pod: assumed})
	return nil
}

// Unreserve implements fwk.ReservePlugin: the assumption is forgotten, and when the pod is
// a gang member, the members waiting at Permit are rejected with it (all or none).
func (p *Plugin) Unreserve(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) {
	if a := assumedOf(cs); a != nil {
		if err := p.assumer.ForgetPod(a); err != nil {
			p.log.V(2).Info("Forgetting an assumed pod failed", "pod", klog.KObj(pod), "node", nodeName, "err", err)
		}
	}
	p.rejectWaitingSiblings(pod, "a member of the pod group failed to schedule")
}

// PostBind implements fwk.PostBindPlugin: the binding went through; the assumption now
// expires after multicache's --pod-assumed-ttl unless the API confirms it first.
func (p *Plugin) PostBind(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, nodeName string) {
	a := assumedOf(cs)
	if a == nil {
		return
	}
	// The API's binding often reaches the cache first: then nothing is left to finish (and
	// the cache would log the refusal).
	if assumed, err := p.assumer.IsAssumedPod(a); err != nil || !assumed {
		return
	}
	if err := p.assumer.FinishBinding(a); err != nil {
		p.log.V(4).Info("Finishing the binding of an assumed pod", "pod", klog.KObj(pod), "node", nodeName, "err", err)
	}
}

func assumedOf(cs fwk.CycleState) *corev1.Pod {
	d, err := cs.Read(assumedKey)
	if err != nil {
		return nil
	}
	if a, ok := d.(*assumedPod); ok {
		return a.pod
	}
	return nil
}
