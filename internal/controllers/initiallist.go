package controllers

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// feedSource is the event source of a feed's own kind. It enqueues every event, as
// controller-runtime's Kind source with EnqueueRequestForObject does, except the adds of
// the informer's initial list: those it reconciles at once, in the informer's delivery
// goroutine, as the informer hands them out.
//
// Why: controller-runtime registers a Kind source's handler only once the informer has
// synced, and starts the workers only once the handler has received the whole list. A cold
// start then hands all 150,000 pods to the queue first and only then applies them, one
// queued reconcile after the other. This source registers its handler when the feed is
// built, before the manager starts the informer, so applying overlaps with the informer
// popping its list (and with the other kinds' lists), as kube-scheduler's event handlers
// do, and skips the queue.
//
// The order is the queue's: the workers wait in their first reconcile until every initial
// add was applied, and every later event of a key goes through the queue, read then from
// the informer's newest copy. Events that come before the controller started the source
// are remembered and queued when it does. A reconcile that fails or asks to be requeued is
// queued, and a panic is recovered and queued as a failure, as controller-runtime does for
// its workers.
type feedSource struct {
	name string
	// r is the feed's reconciler; log builds its logger for a request.
	r   reconcile.Reconciler
	log func(*reconcile.Request) logr.Logger
	// updates filters the updates worth a reconcile (the feed's predicate).
	updates predicate.Predicate
	// informerSynced is the informer's own sync (its initial list popped); reg's is the
	// handler's (every initial add applied).
	informerSynced toolscache.InformerSynced
	reg            toolscache.ResourceEventHandlerRegistration
	started        atomic.Bool
	// ctx is cancelled when the manager stops (Stopper): a direct reconcile waiting on a
	// read must not hold the informer's delivery, and so the informer, past it.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// queue is the controller's, nil until it starts the source; pending are the
	// requests of the events before.
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending []reconcile.Request
}

var _ source.TypedSyncingSource[reconcile.Request] = (*feedSource)(nil)

// newFeedSource registers the source's handler on the informer of obj (created, not
// started, when the manager has not started yet) and returns the source and the reconciler
// the controller's workers must run.
func newFeedSource(ctx context.Context, informers cache.Informers, name string, obj client.Object, r reconcile.Reconciler,
	log func(*reconcile.Request) logr.Logger, updates predicate.Predicate) (*feedSource, reconcile.Reconciler, error) {
	inf, err := informers.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if meta.IsNoMatchError(err) {
		return nil, nil, fmt.Errorf("%s: the API server does not serve %T: install multicache's CRDs (make install, or the chart) or leave the stores that need it out of --stores: %w", name, obj, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: getting the informer of %T: %w", name, obj, err)
	}
	s := &feedSource{name: name, r: r, log: log, updates: updates, informerSynced: inf.HasSynced}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.reg, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: s.onAdd, UpdateFunc: s.onUpdate, DeleteFunc: s.onDelete,
	}); err != nil {
		s.cancel()
		return nil, nil, fmt.Errorf("%s: adding the event handler: %w", name, err)
	}
	return s, s.worker(), nil
}

// worker is the reconciler the controller's workers run: the feed's, once every initial add
// was applied. The workers wait here, not in WaitForSync, for the initial list to be
// applied: controller-runtime bounds WaitForSync by CacheSyncTimeout (2 minutes), and
// applying a large cluster's list on a loaded node must not fail the start.
func (s *feedSource) worker() reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if !s.started.Load() {
			if !toolscache.WaitForCacheSync(ctx.Done(), s.reg.HasSynced) {
				return reconcile.Result{}, fmt.Errorf("%s: stopped before the initial list was applied: %w", s.name, context.Cause(ctx))
			}
			s.started.Store(true)
		}
		return s.r.Reconcile(ctx, req)
	})
}

// Stopper returns the manager runnable (on every replica) that cancels the context of the
// direct reconciles when the manager stops.
func (s *feedSource) Stopper() interface {
	Start(context.Context) error
	NeedLeaderElection() bool
} {
	return feedSourceStopper{s}
}

type feedSourceStopper struct{ s *feedSource }

func (f feedSourceStopper) Start(ctx context.Context) error {
	<-ctx.Done()
	f.s.cancel()
	return nil
}

func (feedSourceStopper) NeedLeaderElection() bool { return false }

// Start implements source.Source: the events so far are queued, and the later ones as
// they come.
func (s *feedSource) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = q
	for _, req := range s.pending {
		q.Add(req)
	}
	s.pending = nil
	return nil
}

// WaitForSync implements source.SyncingSource: until the informer synced, as for
// controller-runtime's Kind source (the workers then wait for the handler to have applied
// the initial list, see newFeedSource).
func (s *feedSource) WaitForSync(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), s.informerSynced) {
		return fmt.Errorf("%s: the informer did not sync: %w", s.name, context.Cause(ctx))
	}
	return nil
}

// String names the source in controller-runtime's logs.
func (s *feedSource) String() string { return "feed source: " + s.name }

func (s *feedSource) onAdd(obj any, isInInitialList bool) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	req := requestOf(o)
	if !isInInitialList || s.started.Load() {
		s.enqueue(req)
		return
	}
	res, err := s.reconcile(req)
	switch {
	case err != nil:
		s.log(&req).V(1).Info("applying an object of the initial list failed; queued", "error", err.Error())
		s.enqueue(req)
	case res.RequeueAfter > 0:
		s.mu.Lock()
		if s.queue != nil {
			s.queue.AddAfter(req, res.RequeueAfter)
		} else {
			s.pending = append(s.pending, req)
		}
		s.mu.Unlock()
	}
}

// reconcile runs the feed's reconciler with the logger its workers would have, recovering a
// panic as an error.
func (s *feedSource) reconcile(req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return s.r.Reconcile(logr.NewContext(s.ctx, s.log(&req)), req)
}

func (s *feedSource) onUpdate(oldObj, newObj any) {
	o, okOld := oldObj.(client.Object)
	n, okNew := newObj.(client.Object)
	if !okOld || !okNew {
		return
	}
	if s.updates != nil && !s.updates.Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n}) {
		return
	}
	s.enqueue(requestOf(n))
}

func (s *feedSource) onDelete(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(client.Object); ok {
		s.enqueue(requestOf(o))
	}
}

func (s *feedSource) enqueue(req reconcile.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queue == nil {
		s.pending = append(s.pending, req)
		return
	}
	s.queue.Add(req)
}

func requestOf(obj client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}
