package plugin

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Permit implements fwk.PermitPlugin. A pod of no group, or of groups the cache knows no
// gang size of, goes on. A gang member waits while fewer than minMember members of one of
// its groups are placed (assumed, bound or running, the pod itself included: Reserve
// assumed it), for the group's own spec.scheduleTimeoutSeconds if it has one, else
// Args.PermitWaitingTimeSeconds (as coscheduling); the member that completes the gang lets
// every waiting member go.
func (p *Plugin) Permit(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	if s := p.cacheDown(); s != nil {
		return s, 0
	}
	keys := multicache.PodGroupKeysOf(pod)
	for _, key := range keys {
		g, ok := p.reader.PodGroup(key)
		if !ok || g.MinMember() <= 1 {
			continue
		}
		if placed := g.Counts.Placed(); placed < g.MinMember() {
			p.log.V(3).Info("Pod group member waits for its gang", "pod", klog.KObj(pod), "node", nodeName, "podGroup", key,
				"placed", placed, "minMember", g.MinMember())
			return fwk.NewStatus(fwk.Wait, fmt.Sprintf("pod group %s: %d of %d members placed", key, placed, g.MinMember())),
				p.waitFor(g)
		}
	}
	if len(keys) > 0 {
		p.allowWaitingSiblings(pod)
	}
	return nil, 0
}

// waitFor is how long a member of g waits at Permit: the group's scheduleTimeoutSeconds
// when set, else the plugin's default.
func (p *Plugin) waitFor(g store.PodGroup) time.Duration {
	if g.PodGroup != nil && g.PodGroup.Spec.ScheduleTimeoutSeconds != nil && *g.PodGroup.Spec.ScheduleTimeoutSeconds > 0 {
		return time.Duration(*g.PodGroup.Spec.ScheduleTimeoutSeconds) * time.Second
	}
	return p.args.permitTimeout()
}

// allowWaitingSiblings lets the waiting members of pod's groups bind.
func (p *Plugin) allowWaitingSiblings(pod *corev1.Pod) {
	p.eachWaitingSibling(pod, func(w fwk.WaitingPod) { w.Allow(Name) })
}

// rejectWaitingSiblings sends the waiting members of pod's groups back to the queue.
func (p *Plugin) rejectWaitingSiblings(pod *corev1.Pod, why string) {
	p.eachWaitingSibling(pod, func(w fwk.WaitingPod) {
		if w.Reject(Name, why) {
			p.log.V(3).Info("Rejected a waiting pod group member", "pod", klog.KObj(w.GetPod()), "because", klog.KObj(pod))
		}
	})
}

// eachWaitingSibling calls fn with every pod waiting at Permit that shares a pod group
// with pod (pod itself excluded).
func (p *Plugin) eachWaitingSibling(pod *corev1.Pod, fn func(fwk.WaitingPod)) {
	keys := multicache.PodGroupKeysOf(pod)
	if len(keys) == 0 {
		return
	}
	mine := make(map[types.NamespacedName]bool, len(keys))
	for _, k := range keys {
		mine[k] = true
	}
	p.handle.IterateOverWaitingPods(func(w fwk.WaitingPod) {
		other := w.GetPod()
		if other.UID == pod.UID {
			return
		}
		for _, k := range multicache.PodGroupKeysOf(other) {
			if mine[k] {
				fn(w)
				return
			}
		}
	})
}
