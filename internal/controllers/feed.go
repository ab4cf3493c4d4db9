package controllers

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// feed is the path of one watched kind into the cache, in the shape of kube-scheduler's
// eventhandlers.go and Kueue's reconcilers:
//
//   - an event handler registered on the kind's informer before the manager starts it
//     applies every notification at once, in the informer's delivery goroutine, with the
//     informer's own object (no copy) or its tombstone; the handler derives the edge from
//     what the stores hold (Handler.Sync), so a resync or a relist of an unchanged object
//     changes nothing; an update of the same version that still asks to be applied (the
//     pod feed takes a relist's new object) goes to the queue at low priority instead;
//   - the feed's controller (a workqueue of keys) applies again what failed, what the
//     verify loop finds drifted (Refeeder) and what a change of scope concerns (a shard's
//     node joining or leaving): Reconcile reads the informer's store and applies the same way.
//
// The registration's HasSynced (client-go: the informer synced and the handler returned
// for every object of the initial list) is what readiness waits for (CatchUp), with the
// initial objects whose apply failed and are being retried.
type feed struct {
	name string
	kind stores.Kind
	// obj is the informer's type.
	obj client.Object
	// apply brings the cache to obj, the current object under key (nil: gone). A positive
	// duration asks to look at the key again then.
	apply applyFunc
	// changed filters the updates worth applying; nil: the resource version moved.
	changed func(oldObj, newObj client.Object) bool
	// queueDeletes sends deletes through the queue instead of applying them: a shard's pod
	// leaving the unbound watch may be on its way to its node's (see nodepods.Set.Vanished).
	queueDeletes bool
	log          logr.Logger

	reg toolscache.ResourceEventHandlerRegistration
	// store is the informer's own store (client-go's SharedInformer GetStore): Reconcile
	// hands the cache the informer's object itself, not the copy the manager's reader fills
	// in, so that the cache and the informer share one object.
	store toolscache.Store
	// ctx is cancelled when the manager stops (Start): an apply waiting on a read must not
	// hold the informer's delivery past it.
	ctx    context.Context
	cancel context.CancelFunc
	// initial counts the objects of the initial list handed to the handler.
	initial atomic.Int64

	mu sync.Mutex
	// queue is the controller's, nil until it starts the feed's source; pending holds the
	// keys queued before.
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending []reconcile.Request
	// retrying are the keys of the initial list whose apply failed, until a reconcile applied
	// them: the cache has not caught up while any is left.
	retrying map[types.NamespacedName]struct{}
	// repairs are the keys the verify loop found drifted, until a reconcile applied them: the
	// informer's object is taken even when older than the cache's (handler.Backwards).
	repairs map[types.NamespacedName]struct{}
}

// applyFunc brings the cache to obj, the current object under key (nil: gone), or for a
// handler.Deleted delivery the object a delete notification names; a positive duration asks
// to look at the key again then.
type applyFunc = func(ctx context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error)

// register adds the feed's handler to the informer of f.obj (created, not started, when the
// manager has not started yet).
func (f *feed) register(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, f.obj, cache.BlockUntilSynced(false))
	if meta.IsNoMatchError(err) {
		return fmt.Errorf("%s: the API server does not serve %T: install multicache's CRDs (make install, or the chart) or leave the stores that need it out of --stores: %w", f.name, f.obj, err)
	}
	if err != nil {
		return fmt.Errorf("%s: getting the informer of %T: %w", f.name, f.obj, err)
	}
	// Required: reading through the manager's reader instead (a copy per read) leaves the cache
	// holding copies after a relist, 145% more live heap and 14 times the time at 150,000 pods
	// (BenchmarkFeed_RelistOf150000Pods, reader); TestFeed_ControllerRuntimeInformersExposeTheirStore
	// fails if controller-runtime's informer stops exposing GetStore.
	s, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return fmt.Errorf("%s: the informer of %T (%T) does not expose its store (client-go's GetStore), which the feed reads: use controller-runtime's cache", f.name, f.obj, inf)
	}
	f.store = s.GetStore()
	f.ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
	f.retrying = map[types.NamespacedName]struct{}{}
	f.repairs = map[types.NamespacedName]struct{}{}
	if f.reg, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: f.onAdd, UpdateFunc: f.onUpdate, DeleteFunc: f.onDelete,
	}); err != nil {
		f.cancel()
		return fmt.Errorf("%s: adding the event handler: %w", f.name, err)
	}
	return nil
}

func (f *feed) onAdd(obj any, isInInitialList bool) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	if isInInitialList {
		f.initial.Add(1)
	}
	f.applyNow(client.ObjectKeyFromObject(o), o, handler.Current, isInInitialList)
}

func (f *feed) onUpdate(oldObj, newObj any) {
	o, okOld := oldObj.(client.Object)
	n, okNew := newObj.(client.Object)
	if !okOld || !okNew {
		return
	}
	sameVersion := o.GetResourceVersion() == n.GetResourceVersion()
	if f.changed != nil && !f.changed(o, n) || f.changed == nil && sameVersion {
		return
	}
	if sameVersion {
		// A relist decoded the object again, unchanged: the cache takes the new object only
		// to let the old one go. A relist hands over every object at once, ahead of what
		// changed meanwhile and of the watch after it, so such a swap goes to the queue at
		// low priority (as controller-runtime's handlers queue an update of the same
		// version) instead of holding those back (up to a second behind 30,000 pods here,
		// BenchmarkFeed_AChangeBehindARelistOf30000Pods).
		f.enqueueLow(client.ObjectKeyFromObject(n))
		return
	}
	d := handler.Current
	if older(n.GetResourceVersion(), o.GetResourceVersion()) {
		// Watch events never go backwards: the informer relisted an API whose versions did
		// (an etcd restore without --bump-revision).
		d = handler.Backwards
	}
	f.applyNow(client.ObjectKeyFromObject(n), n, d, false)
}

func (f *feed) onDelete(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(o)
	if f.queueDeletes {
		f.enqueue(key, 0)
		return
	}
	// The deleted object goes with the delete: the informer's store runs ahead of its
	// notifications, so a reconcile may have applied the object recreated under the name
	// already, which this delete must leave alone.
	f.applyNow(key, o, handler.Deleted, false)
}

// applyNow applies a notification; what fails goes to the queue.
func (f *feed) applyNow(key types.NamespacedName, obj client.Object, d handler.Delivery, initial bool) {
	after, err := f.apply(f.ctx, key, obj, d)
	switch {
	case err != nil:
		f.log.V(1).Info("applying an event failed; queued", "key", key.String(), "error", err.Error())
		if initial {
			f.mu.Lock()
			f.retrying[key] = struct{}{}
			f.mu.Unlock()
		}
		if d == handler.Backwards {
			// The retry must take the older version too, or it would leave it for good.
			f.enqueueRepair(key)
			return
		}
		f.enqueue(key, 0)
	case after > 0:
		f.enqueue(key, after)
	}
}

// Reconcile implements reconcile.Reconciler: the queue's path, reading the informer's store.
//
// The informer's delivery may apply a change of the key between the read and the apply
// (a delete, above all): the apply would then bring back what was already gone. So the key
// is read again after the apply, and what the informer holds then is applied, until the
// two reads agree (an apply of the delivery that came in between is applied again, which
// changes nothing).
func (f *feed) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj, err := f.current(req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := handler.Current
	f.mu.Lock()
	_, repair := f.repairs[req.NamespacedName]
	if repair {
		d = handler.Backwards
		// Taken now: a repair asked while this reconcile runs marks the key again.
		delete(f.repairs, req.NamespacedName)
	}
	f.mu.Unlock()
	var after time.Duration
	for attempt := 0; ; attempt++ {
		if after, err = f.apply(ctx, req.NamespacedName, obj, d); err != nil {
			if repair {
				f.mu.Lock()
				f.repairs[req.NamespacedName] = struct{}{} // the retry repairs too
				f.mu.Unlock()
			}
			return ctrl.Result{}, err
		}
		now, err := f.current(req.NamespacedName)
		if err != nil {
			return ctrl.Result{}, err
		}
		if sameObject(obj, now) {
			break
		}
		if attempt == maxReapplies {
			// The key keeps changing: its notifications are applying it; look again.
			f.enqueue(req.NamespacedName, 0)
			return ctrl.Result{}, nil
		}
		obj = now
	}
	f.mu.Lock()
	delete(f.retrying, req.NamespacedName)
	f.mu.Unlock()
	return ctrl.Result{RequeueAfter: after}, nil
}

// maxReapplies bounds how often a reconcile applies a key again because it changed meanwhile.
const maxReapplies = 3

// sameObject reports whether two reads of a key found the same object: the same UID and
// version (the informer's store or a reader's copy), or none twice. Pointer identity would
// decide nothing more: one object has one UID and version.
func sameObject(a, b client.Object) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.GetUID() == b.GetUID() && a.GetResourceVersion() == b.GetResourceVersion()
}

// current returns the object the informer holds under key, nil when none.
func (f *feed) current(key types.NamespacedName) (client.Object, error) {
	storeKey := toolscache.NewObjectName(key.Namespace, key.Name).String()
	item, exists, err := f.store.GetByKey(storeKey)
	if err != nil || !exists {
		return nil, err
	}
	obj, ok := item.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s: the informer holds a %T under %s", f.name, item, storeKey)
	}
	return obj, nil
}

// source is the feed's queue as the controller's source: the keys queued so far, and the
// later ones as they come.
func (f *feed) source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.queue = q
		for _, req := range f.pending {
			q.Add(req)
		}
		f.pending = nil
		return nil
	})
}

// enqueue puts a key into the feed's queue (after a delay, when positive).
func (f *feed) enqueue(key types.NamespacedName, after time.Duration) {
	req := reconcile.Request{NamespacedName: key}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.queue == nil:
		f.pending = append(f.pending, req)
	case after > 0:
		f.queue.AddAfter(req, after)
	default:
		f.queue.Add(req)
	}
}

// enqueueRepair queues a key the verify loop found drifted: its reconcile takes the
// informer's object even when its version is older than the cache's.
func (f *feed) enqueueRepair(key types.NamespacedName) {
	f.mu.Lock()
	if f.repairs != nil {
		f.repairs[key] = struct{}{}
	}
	f.mu.Unlock()
	f.enqueue(key, 0)
}

// older reports whether resource version a is known to be older than b.
func older(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c < 0
}

// enqueueLow puts a key into the feed's queue behind everything else queued (at
// controller-runtime's handler.LowPriority when the queue has priorities).
//
// Kept: a relist's swaps would otherwise hold back what changed meanwhile (up to a second
// behind 30,000 pods, BenchmarkFeed_AChangeBehindARelistOf30000Pods); the assertion is on
// controller-runtime's published interface, and TestFeed_ControllerRuntimeQueuesALowPriorityKeyLast
// fails if its default queue stops putting a low-priority key last.
func (f *feed) enqueueLow(key types.NamespacedName) {
	req := reconcile.Request{NamespacedName: key}
	f.mu.Lock()
	defer f.mu.Unlock()
	if pq, ok := f.queue.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(crhandler.LowPriority)}, req)
		return
	}
	if f.queue == nil {
		f.pending = append(f.pending, req)
		return
	}
	f.queue.Add(req)
}

// synced reports whether the feed applied its informer's initial list, retries included.
func (f *feed) synced() bool {
	if !f.reg.HasSynced() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.retrying) == 0
}

// status says what the feed still misses of its initial list.
func (f *feed) status() string {
	if !f.reg.HasSynced() {
		return fmt.Sprintf("%s: %d initial objects applied, the informer's list not yet all handed out", f.name, f.initial.Load())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.retrying); n > 0 {
		return fmt.Sprintf("%s: %d of %d initial objects being retried", f.name, n, f.initial.Load())
	}
	return ""
}

// Start implements manager.Runnable (every replica): it cancels the applies' context when the
// manager stops.
func (f *feed) Start(ctx context.Context) error {
	<-ctx.Done()
	f.cancel()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: standbys feed their caches.
func (f *feed) NeedLeaderElection() bool { return false }

// report logs a rejected event at debug level: the handler already logged it once and
// counted it. Rejections are not retried: the event is invalid for the cache's state, and
// the next notification of the key (or the verify loop) brings what is current.
func report(log logr.Logger, kind stores.Kind, err error) {
	if err != nil {
		log.V(1).Info("cache rejected the event", "kind", kind, "error", err.Error())
	}
}

// syncAs adapts a handler's Sync to a feed's apply, with an optional filter (a sub-cluster
// keeps only its nodes): a filtered-out object counts as gone. A delete notification's
// object is not filtered: it names what goes.
func syncAs[T client.Object](log logr.Logger, kind stores.Kind, sync func(types.NamespacedName, T, handler.Delivery) error,
	keep func(context.Context, T) (bool, error)) applyFunc {
	return func(ctx context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error) {
		var cur T
		if obj != nil {
			t, ok := obj.(T)
			if !ok {
				return 0, fmt.Errorf("%s feed handed a %T", kind, obj)
			}
			cur = t
			if keep != nil && d != handler.Deleted {
				in, err := keep(ctx, t)
				if err != nil {
					return 0, err
				}
				if !in {
					var zero T
					cur, d = zero, handler.Current
				}
			}
		}
		report(log, kind, sync(key, cur, d))
		return 0, nil
	}
}

// delivered is the Sync of a kind the handler holds as the informer's type.
func delivered[T client.Object](h *handler.Handler) func(types.NamespacedName, T, handler.Delivery) error {
	return func(key types.NamespacedName, obj T, d handler.Delivery) error {
		return h.Sync(key, obj, true, d)
	}
}
