package controllers

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/nodepods"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Options configure the controllers.
type Options struct {
	// NodeInScope, when set, restricts the cache to a sub-cluster: it reports whether a node
	// belongs to it. Pods and reservations are kept only on such nodes, and the status
	// writers that need the whole cluster (PodGroup, Movement) are not started.
	NodeInScope func(ctx context.Context, node string) (bool, error)
	// ReservationGCGrace is how long an Expired reservation is kept before it is deleted.
	ReservationGCGrace time.Duration
	// ComponentName is written into Movement status.notifiedSchedulers.
	ComponentName string
	// Clock is the time source of the status writers (default: the real clock).
	Clock clock.PassiveClock
	// CatchUp tracks the feeds' catch-up; the status writers wait for it. Required.
	CatchUp *CatchUp
	// Fence, when set, is asked before every attempt of every write of the status writers
	// and the GC, client-go's own resends included (the check is in their transport): an
	// error (this replica's lease is not known to be held) refuses the request unsent.
	Fence func() error
	// PodGroupSources are the APIs pod groups are read from when the PodGroupStore is
	// enabled (podgroup_sources.go); none means multicache's own only. Only multicache's own
	// PodGroups get a status writer.
	PodGroupSources []stores.PodGroupSource
}

// Setup registers on mgr a feed controller for every kind an enabled store handles (on
// every replica: standbys keep their caches warm) and the status writers of the enabled
// stores (on the leader only, once the cache caught up). Kinds no enabled store handles are
// not watched at all. Every feed is tracked by opts.CatchUp and can be re-fed through the
// returned Refeeder.
func Setup(mgr manager.Manager, h *handler.Handler, n *Notifier, opts Options) (*Refeeder, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.CatchUp == nil {
		return nil, errors.New("controllers.Options.CatchUp is required")
	}
	reader := mgr.GetClient()
	watched := h.WatchedKinds()
	refeeder := newRefeeder()
	_, sharded := mgr.GetCache().(*nodepods.Cache)
	feedOf := func(name string, obj client.Object, r reconcile.Reconciler, extra ...func(*builder.Builder)) error {
		changed := predicate.Predicate(predicate.ResourceVersionChangedPredicate{})
		_, isPod := obj.(*corev1.Pod)
		if isPod {
			changed = objectReplaced{}
		}
		logs := lazyLogConstructor(mgr.GetLogger(), name, gvkOf(mgr, obj))
		r = opts.CatchUp.Track(name, obj, r)
		var events source.TypedSource[reconcile.Request]
		if isPod && sharded {
			// A shard's pods come from nodepods.Set, which hands a new handler the pods it
			// holds while it holds its own lock: they go through the queue.
			events = source.Kind(mgr.GetCache(), obj, &crhandler.EnqueueRequestForObject{}, changed)
		} else {
			fs, worker, err := newFeedSource(context.Background(), mgr.GetCache(), name, obj, r, logs, changed)
			if err != nil {
				return err
			}
			if err := mgr.Add(fs.Stopper()); err != nil {
				return err
			}
			events, r = fs, worker
		}
		b := ctrl.NewControllerManagedBy(mgr).Named(name).
			WatchesRawSource(events).
			WatchesRawSource(refeeder.source(name)).
			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), LogConstructor: logs})
		for _, e := range extra {
			e(b)
		}
		return b.Complete(r)
	}

	pods := &PodReconciler{Reader: reader, Handler: h}
	var err error
	if pods.Lookup, err = sharedLookup(context.Background(), mgr.GetCache(), &corev1.Pod{}); err != nil {
		return nil, err
	}
	if shard, ok := mgr.GetCache().(*nodepods.Cache); ok {
		api := mgr.GetAPIReader()
		pods.Vanished = func(ctx context.Context, key types.NamespacedName) (*corev1.Pod, bool, error) {
			return shard.Set.Vanished(ctx, api, key)
		}
	}
	reservations := newNamespacedFeed(reader, stores.KindReservation, h.LastSeenReservation, h.AddReservation, h.UpdateReservation, h.DeleteReservation)
	nmNodes := newFeed(reader, stores.KindNMNode, h.LastSeenNMNode, h.AddNMNode, h.UpdateNMNode, h.DeleteNMNode)
	cnrs := newFeed(reader, stores.KindCNR, h.LastSeenCNR, h.AddCNR, h.UpdateCNR, h.DeleteCNR)
	var podExtras, rsvExtras, perNodeExtras []func(*builder.Builder)
	if opts.NodeInScope != nil {
		if pods.Keep, podExtras, err = scoped(mgr, &corev1.Pod{}, &corev1.PodList{}, opts.NodeInScope,
			func(p *corev1.Pod) string { return p.Spec.NodeName }); err != nil {
			return nil, err
		}
		if reservations.keep, rsvExtras, err = scoped(mgr, &v1alpha1.Reservation{}, &v1alpha1.ReservationList{}, opts.NodeInScope,
			func(r *v1alpha1.Reservation) string { return r.Spec.NodeName }); err != nil {
			return nil, err
		}
		// An NMNode or CNR follows its Node's shard, whatever its own labels say: a node that
		// left the shard must not stay offered through its agent's objects.
		nmNodes.keep = func(ctx context.Context, nm *v1alpha1.NMNode) (bool, error) { return opts.NodeInScope(ctx, nm.Name) }
		cnrs.keep = func(ctx context.Context, cnr *v1alpha1.CustomNodeResource) (bool, error) {
			return opts.NodeInScope(ctx, cnr.Name)
		}
		perNodeExtras = []func(*builder.Builder){sameNameAsNode}
	}
	feeds := []struct {
		kind  stores.Kind
		name  string
		obj   client.Object
		r     reconcile.Reconciler
		extra []func(*builder.Builder)
	}{
		{stores.KindPod, "pod-feed", &corev1.Pod{}, pods, podExtras},
		{stores.KindNode, "node-feed", &corev1.Node{}, newFeed(reader, stores.KindNode, h.LastSeenNode, h.AddNode, h.UpdateNode, h.DeleteNode), nil},
		{stores.KindNMNode, "nmnode-feed", &v1alpha1.NMNode{}, nmNodes, perNodeExtras},
		{stores.KindCNR, "cnr-feed", &v1alpha1.CustomNodeResource{}, cnrs, perNodeExtras},
		{stores.KindPodGroup, "podgroup-feed", &v1alpha1.PodGroup{}, newNamespacedFeed(reader, stores.KindPodGroup, h.LastSeenPodGroup, h.AddPodGroup, h.UpdatePodGroup, h.DeletePodGroup), nil},
		{stores.KindPDB, "pdb-feed", &policyv1.PodDisruptionBudget{}, newNamespacedFeed(reader, stores.KindPDB, h.LastSeenPDB, h.AddPDB, h.UpdatePDB, h.DeletePDB), nil},
		{stores.KindMovement, "movement-feed", &v1alpha1.Movement{}, newFeed(reader, stores.KindMovement, h.LastSeenMovement, h.AddMovement, h.UpdateMovement, h.DeleteMovement), nil},
		{stores.KindReservation, "reservation-feed", &v1alpha1.Reservation{}, reservations, rsvExtras},
	}
	for _, f := range feeds {
		if !slices.Contains(watched, f.kind) {
			continue
		}
		if f.kind == stores.KindPodGroup && !opts.followsPodGroupSource(stores.PodGroupSourceMulticache) {
			continue
		}
		if err := feedOf(f.name, f.obj, f.r, f.extra...); err != nil {
			return nil, err
		}
	}
	if slices.Contains(watched, stores.KindPodGroup) {
		for _, f := range podGroupSourceFeeds(reader, h, opts) {
			if err := feedOf(f.name, f.obj, f.r); err != nil {
				return nil, err
			}
		}
	}
	if slices.Contains(watched, stores.KindOwner) {
		for _, o := range ownerKinds {
			if err := feedOf(ownerFeedName(string(o.ownerType)), o.obj, o.setup(reader, h)); err != nil {
				return nil, err
			}
		}
	}
	if err := setupStatusWriters(mgr, h, n, watched, opts); err != nil {
		return nil, err
	}
	if slices.Contains(watched, stores.KindReservation) {
		if err := setupReplacements(mgr, h, n, opts); err != nil {
			return nil, err
		}
	}
	return refeeder, nil
}

// sameNameAsNode re-reconciles the object named like a node (its NMNode, its CNR) when the
// node changes, joins or leaves the sub-cluster.
func sameNameAsNode(b *builder.Builder) {
	b.Watches(&corev1.Node{}, crhandler.EnqueueRequestsFromMapFunc(func(_ context.Context, node client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: node.GetName()}}}
	}))
}

// scoped returns the keep filter of a kind bound to nodes (pods, reservations) in a
// sub-cluster: kept only on a node of the sub-cluster. It also returns a watch that
// re-reconciles a node's objects when the node joins or leaves (through a spec.nodeName
// index).
func scoped[T client.Object](mgr manager.Manager, obj T, list client.ObjectList, inScope func(context.Context, string) (bool, error),
	nodeOf func(T) string) (func(context.Context, T) (bool, error), []func(*builder.Builder), error) {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, nodeNameField,
		func(o client.Object) []string { return []string{nodeOf(o.(T))} }); err != nil {
		return nil, nil, err
	}
	keep := func(ctx context.Context, o T) (bool, error) {
		if node := nodeOf(o); node != "" {
			return inScope(ctx, node)
		}
		return false, nil
	}
	reader := mgr.GetClient()
	nodeChanged := func(b *builder.Builder) {
		b.Watches(&corev1.Node{}, crhandler.EnqueueRequestsFromMapFunc(func(ctx context.Context, node client.Object) []reconcile.Request {
			return onNode(ctx, reader, list.DeepCopyObject().(client.ObjectList), node.GetName())
		}))
	}
	return keep, []func(*builder.Builder){nodeChanged}, nil
}

// setupStatusWriters registers the status writers; they need leader election (the default)
// and reconcile nothing before the cache caught up.
func setupStatusWriters(mgr manager.Manager, h *handler.Handler, n *Notifier, watched []stores.Kind, opts Options) error {
	c, err := writer(mgr, opts.Fence)
	if err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("multicache")
	writers := []struct {
		kind stores.Kind
		name string
		obj  client.Object
		r    reconcile.Reconciler
	}{
		{stores.KindPodGroup, "podgroup-status", &v1alpha1.PodGroup{}, &PodGroupStatusReconciler{Client: c, Reader: h, Clock: opts.Clock, Recorder: recorder}},
		{stores.KindMovement, "movement-status", &v1alpha1.Movement{}, &MovementStatusReconciler{Client: c, Reader: h, ComponentName: opts.ComponentName}},
		{stores.KindReservation, "reservation-status", &v1alpha1.Reservation{}, &ReservationStatusReconciler{Client: c, Reader: h, Clock: opts.Clock, GCGrace: opts.ReservationGCGrace, Recorder: recorder}},
	}
	for _, w := range writers {
		if !slices.Contains(watched, w.kind) {
			continue
		}
		if w.kind == stores.KindPodGroup && !opts.followsPodGroupSource(stores.PodGroupSourceMulticache) {
			continue
		}
		if opts.NodeInScope != nil && w.kind != stores.KindReservation {
			// A sub-cluster sees only its part of a group or movement; writing that would
			// fight the other sub-clusters' writers.
			continue
		}
		err := ctrl.NewControllerManagedBy(mgr).Named(w.name).
			For(w.obj).
			WatchesRawSource(n.source(w.kind)).
			WithOptions(controller.Options{LogConstructor: lazyLogConstructor(mgr.GetLogger(), w.name, gvkOf(mgr, w.obj)),
				MaxConcurrentReconciles: statusWorkers}).
			Complete(opts.CatchUp.Gate(w.r))
		if err != nil {
			return err
		}
	}
	return nil
}

// newFeed builds the feed of a cluster-scoped kind (keyed by name).
func newFeed[T client.Object](reader client.Reader, kind stores.Kind, lastSeen func(string) (T, bool),
	add func(T) error, update func(T, T) error, del func(T) error) *feed[T] {
	return newNamespacedFeed(reader, kind, func(key types.NamespacedName) (T, bool) { return lastSeen(key.Name) }, add, update, del)
}

// newNamespacedFeed builds the feed of a namespaced kind.
func newNamespacedFeed[T client.Object](reader client.Reader, kind stores.Kind, lastSeen func(types.NamespacedName) (T, bool),
	add func(T) error, update func(T, T) error, del func(T) error) *feed[T] {
	return &feed[T]{reader: reader, kind: kind, newObj: newObject[T], lastSeen: lastSeen, add: add, update: update, del: del}
}

// newObject returns a new empty object of the pointer type T.
func newObject[T client.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

// objectReplaced passes an update when the resource version moved or when the informer holds
// a new object of the same version (a relist decodes every object again): the pod feed hands
// the cache the informer's own objects, and must take the new ones so that the old ones are
// not kept alive. A resync hands the same object again and is filtered out. Both go through
// the one pod feed: two controllers syncing the same key from separate queues could apply an
// older read after a newer one (a review found a deleted pod re-added that way).
type objectReplaced struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (objectReplaced) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return true
	}
	return e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion() || e.ObjectOld != e.ObjectNew
}

// statusWorkers is how many objects of one kind a status writer writes at once. Each write
// is one API round trip, independent of the others (controller-runtime never reconciles
// one key twice at a time): with one worker, 10,000 reservations expiring in the same
// second took the leader minutes to publish on a loaded API server.
const statusWorkers = 4

// gvkOf is the kind of obj in the manager's scheme (empty when it has none: the log lines
// then go without controllerGroup and controllerKind, and the builder reports the error).
func gvkOf(mgr ctrl.Manager, obj client.Object) schema.GroupVersionKind {
	gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme())
	if err != nil {
		return schema.GroupVersionKind{}
	}
	return gvk
}
