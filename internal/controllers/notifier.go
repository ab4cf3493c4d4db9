package controllers

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Notifier routes the objects the stores report changed through their Outbox (a pod
// group's counters, a reservation's phase, a movement's actual pods) to the queue of the
// status writer of that kind. ObjectChanged runs under the handler lock, so it only adds to a workqueue,
// which never blocks. Until a status writer runs (standbys, or before the leader starts
// them) its notifications are dropped: a starting status writer reconciles every object of
// its kind anyway.
type Notifier struct {
	mu     sync.RWMutex
	queues map[stores.Kind]workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// NewNotifier returns a notifier with no status writer attached.
func NewNotifier() *Notifier {
	return &Notifier{queues: map[stores.Kind]workqueue.TypedRateLimitingInterface[reconcile.Request]{}}
}

// ObjectChanged queues key for the status writer of kind (Handler.SetStatusNotifier).
func (n *Notifier) ObjectChanged(kind stores.Kind, key types.NamespacedName) {
	n.mu.RLock()
	q := n.queues[kind]
	n.mu.RUnlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}

// source is the event source of a status writer: it attaches the writer's queue while the
// writer runs. lagging, if set, lists the objects whose recorded status is behind the
// cache when the writer starts (a standby that takes the lead placed them without writing,
// and its notifications were dropped): they are queued at once, ahead of the writer's
// initial list, which controller-runtime's priority queue takes at low priority.
func (n *Notifier) source(kind stores.Kind, lagging func() []types.NamespacedName) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		n.mu.Lock()
		n.queues[kind] = q
		n.mu.Unlock()
		if lagging != nil {
			go func() {
				for _, key := range lagging() {
					q.Add(reconcile.Request{NamespacedName: key})
				}
			}()
		}
		go func() {
			<-ctx.Done()
			n.mu.Lock()
			if n.queues[kind] == q {
				delete(n.queues, kind)
			}
			n.mu.Unlock()
		}()
		return nil
	})
}
