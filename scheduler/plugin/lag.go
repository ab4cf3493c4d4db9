package plugin

import (
	"context"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ReasonLagging is the reason Filter gives for a node where the cache has not yet seen a
// pod leave that the scheduler saw leave: multicache may be about to keep its place.
const ReasonLagging = "node(s) where multicache has not yet seen a pod leave"

// retryPeriod is how often the pods turned away because the cache lagged are tried again.
const retryPeriod = time.Second

// lagging returns a pod the cache holds on node that kube-scheduler's node info does not
// (and no preemption what-if took off): the scheduler saw it deleted or moved before the
// cache did. Both follow the same API through informers of their own; until the cache
// applied the deletion, a kept place (reserve-on-delete) is not visible yet, and the
// scheduler would hand it out. Nil when the cache holds nothing more than the scheduler.
//
// The answer is remembered per node under both sides' generations of the node: Filter asks
// for every node in every cycle, and a node's pods change far less often. Preemption's
// what-ifs (removed pods) are not remembered.
func (p *Plugin) lagging(node string, nodeInfo fwk.NodeInfo, st *podState) *corev1.Pod {
	info, ok := p.snap.NodeInfo(node)
	if !ok || len(info.Pods) == 0 {
		return nil
	}
	if len(st.removed) > 0 {
		return firstUnknown(info.Pods, nodeInfo.GetPods(), st.removed)
	}
	key := lagKey{scheduler: nodeInfo.GetGeneration(), cache: info.Generation}
	return p.lagMemo.answer(node, key, func() *corev1.Pod { return firstUnknown(info.Pods, nodeInfo.GetPods(), nil) })
}

// laggingStatus is Filter's answer for a node where the cache still holds gone, a pod the
// scheduler saw leave: nil for the pod the place of gone is to be kept for (it would
// consume the hold the cache is about to place; PreScore prefers the node), else
// Unschedulable, the pod to be tried again within a second. sole reports whether gone is
// the only such pod on the node (another's place may be kept for another pod).
func (p *Plugin) laggingStatus(pod, gone *corev1.Pod, requests store.Resources, sole func() bool) *fwk.Status {
	if p.takesPlaceOf(pod, gone, requests, sole) {
		return nil
	}
	p.retrySoon(pod)
	return fwk.NewStatus(fwk.Unschedulable, ReasonLagging, klog.KObj(gone).String())
}

// takesPlaceOf reports whether pod (asking requests) may use the place of gone before the
// cache saw gone leave: the place is to be kept for pod, pod asks no more than gone held,
// and gone is the only pod leaving the node that the cache still holds (sole).
func (p *Plugin) takesPlaceOf(pod, gone *corev1.Pod, requests store.Resources, sole func() bool) bool {
	return p.reader.KeepsPlaceFor(gone, pod) && fitsIn(requests, store.Accounting{}.PodRequests(gone)) && sole()
}

// soleUnknown reports whether gone is the only pod the cache holds on node that the
// scheduler's node info lacks.
func (p *Plugin) soleUnknown(node string, nodeInfo fwk.NodeInfo, st *podState, gone *corev1.Pod) bool {
	info, ok := p.snap.NodeInfo(node)
	if !ok {
		return false
	}
	removed := maps.Clone(st.removed)
	if removed == nil {
		removed = map[types.UID]bool{}
	}
	removed[gone.UID] = true
	return firstUnknown(info.Pods, nodeInfo.GetPods(), removed) == nil
}

// fitsIn reports whether every resource of r is at most the same resource of held.
func fitsIn(r, held store.Resources) bool {
	if r.MilliCPU > held.MilliCPU || r.Memory > held.Memory || r.EphemeralStorage > held.EphemeralStorage {
		return false
	}
	for name, v := range r.Scalar {
		if v > held.Scalar[name] {
			return false
		}
	}
	return true
}

// lagMemo is lagging's last answer by node name (*lagEntry); Filters of one cycle share it
// from parallel goroutines.
type lagMemo struct{ m sync.Map }

// answer returns the answer remembered for node at key, else computes and remembers it.
func (l *lagMemo) answer(node string, key lagKey, compute func() *corev1.Pod) *corev1.Pod {
	if v, ok := l.m.Load(node); ok {
		if e := v.(*lagEntry); e.key == key {
			return e.gone
		}
	}
	gone := compute()
	l.m.Store(node, &lagEntry{key: key, gone: gone})
	return gone
}

// prune forgets the nodes exists denies: a deleted node's answer would otherwise stay
// for good, with the pod it names.
func (l *lagMemo) prune(exists func(node string) bool) (pruned int) {
	l.m.Range(func(k, _ any) bool {
		if !exists(k.(string)) {
			l.m.Delete(k)
			pruned++
		}
		return true
	})
	return pruned
}

// lagKey is a node's generation in kube-scheduler's node info and in the cache.
type lagKey struct{ scheduler, cache int64 }

// lagEntry is lagging's answer for a node at key.
type lagEntry struct {
	key  lagKey
	gone *corev1.Pod
}

// scanLimit is the size (cached pods times the scheduler's) up to which firstUnknown
// compares pairwise: Filter runs once per node and pod, and a node's few pods are found
// faster by a scan than through a map built for each call.
const scanLimit = 256

// firstUnknown returns the first of cached that is neither among pods nor removed.
func firstUnknown(cached []*corev1.Pod, pods []fwk.PodInfo, removed map[types.UID]bool) *corev1.Pod {
	if len(cached)*len(pods) <= scanLimit {
		for _, c := range cached {
			if !removed[c.UID] && !hasUID(pods, c.UID) {
				return c
			}
		}
		return nil
	}
	known := make(map[types.UID]struct{}, len(pods))
	for _, pi := range pods {
		known[pi.GetPod().UID] = struct{}{}
	}
	for _, c := range cached {
		if _, ok := known[c.UID]; !ok && !removed[c.UID] {
			return c
		}
	}
	return nil
}

func hasUID(pods []fwk.PodInfo, uid types.UID) bool {
	for _, pi := range pods {
		if pi.GetPod().UID == uid {
			return true
		}
	}
	return false
}

// retrier activates, every retryPeriod, the pods Filter turned away because the cache
// lagged: no cluster event would requeue them (the event that made the difference already
// happened).
type retrier struct {
	mu   sync.Mutex
	pods map[string]*corev1.Pod
}

// retrySoon has pod tried again within retryPeriod.
func (p *Plugin) retrySoon(pod *corev1.Pod) {
	p.retry.mu.Lock()
	defer p.retry.mu.Unlock()
	if p.retry.pods == nil {
		p.retry.pods = map[string]*corev1.Pod{}
	}
	p.retry.pods[klog.KObj(pod).String()] = pod
}

// pruneEvery is how many retryPeriods pass between prunes of the lag memo.
const pruneEvery = 60

// runRetries activates, every retryPeriod until ctx is done, the pods turned away while
// the cache lagged and those turned away by room kept that is released now; every
// pruneEvery periods it drops the lag memo's deleted nodes.
func (p *Plugin) runRetries(ctx context.Context) {
	tick := time.NewTicker(retryPeriod)
	defer tick.Stop()
	logger := klog.FromContext(ctx)
	nodes := p.handle.SharedInformerFactory().Core().V1().Nodes().Lister()
	for ticks := 1; ; ticks++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ticks%pruneEvery == 0 {
			p.lagMemo.prune(func(node string) bool { _, err := nodes.Get(node); return err == nil })
		}
		p.retry.mu.Lock()
		pods := p.retry.pods
		p.retry.pods = nil
		p.retry.mu.Unlock()
		if len(pods) > 0 {
			p.log.V(3).Info("Trying again pods turned away while multicache lagged", "pods", len(pods))
			p.handle.Activate(logger, pods)
		}
		if pods := p.released(); len(pods) > 0 {
			p.log.V(3).Info("Trying again pods turned away by room kept that is released now", "pods", len(pods))
			p.handle.Activate(logger, pods)
		}
	}
}
