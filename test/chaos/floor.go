package chaos

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// informerFloor runs bare client-go informers of pods and nodes (every namespace, as the
// operators watch them) in the suite's process: after a 410 they relist with client-go's
// own backoff, which no cache built on informers can beat. The relist target is judged
// against them in the same run. The other kinds the operators watch are a few thousand
// objects beside 30,000 pods and are left out.
type informerFloor struct {
	mu sync.Mutex
	// replayed are, per kind, the times the informer handed over an object again at the
	// same version: what a relist's Replace does with every object that did not change (a
	// list or a streamed watch-list alike). The last one after a fault ends its relist.
	replayed map[string][]time.Time
}

// startInformerFloor starts the informers until ctx is done and waits for their first lists.
func startInformerFloor(ctx context.Context, cs kubernetes.Interface) *informerFloor {
	f := &informerFloor{replayed: map[string][]time.Time{}}
	pods, nodes := f.informer(cs, "pods", &corev1.Pod{}), f.informer(cs, "nodes", &corev1.Node{})
	for _, inf := range []cache.SharedIndexInformer{pods, nodes} {
		go inf.RunWithContext(ctx)
	}
	cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, nodes.HasSynced)
	return f
}

// informer is a bare informer of one core kind whose replays are recorded.
func (f *informerFloor) informer(cs kubernetes.Interface, kind string, obj runtime.Object) cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), kind, metav1.NamespaceAll, fields.Everything())
	inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		o, ok1 := oldObj.(metav1.Object)
		n, ok2 := newObj.(metav1.Object)
		if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
			now := time.Now()
			f.mu.Lock()
			if r := f.replayed[kind]; len(r) > 0 && now.Sub(r[len(r)-1]) < time.Second {
				r[len(r)-1] = now // the same relist: keep its end only
			} else {
				f.replayed[kind] = append(r, now)
			}
			f.mu.Unlock()
		}
	}})
	return inf
}

// relistAfter returns how long after since the slowest kind ended its first relist, and
// whether every kind relisted.
func (f *informerFloor) relistAfter(since time.Time) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var worst time.Duration
	for _, kind := range []string{"pods", "nodes"} {
		found := false
		for _, at := range f.replayed[kind] {
			if !at.Before(since) {
				worst, found = max(worst, at.Sub(since)), true
				break
			}
		}
		if !found {
			return worst, false
		}
	}
	return worst, true
}
