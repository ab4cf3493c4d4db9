package controllers

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/nodepods"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
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
	// Fence, when set, is asked before every attempt of every write of the status writers,
	// the GC and the Events they record, client-go's own resends included (the check is in
	// their transport): an error (this replica's lease is not known to be held) refuses the
	// request unsent, and an attempt let through is cut at the deadline it returns.
	Fence Fence
	// Recorder records the writers' Events (nil: none; operator.New passes
	// NewRecorder(mgr, Fence)).
	Recorder events.EventRecorder
	// PodGroupSources are the APIs pod groups are read from when the PodGroupStore is
	// enabled (podgroup_sources.go); none means multicache's own only. Only multicache's own
	// PodGroups get a status writer.
	PodGroupSources []store.PodGroupSource
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
	watched := h.WatchedKinds()
	refeeder := newRefeeder()
	log := mgr.GetLogger().WithName("feed")
	feedOf := func(name string, kind stores.Kind, obj client.Object, apply applyFunc, extra ...func(*builder.Builder)) (*feed, error) {
		f := &feed{name: name, kind: kind, obj: obj, apply: apply, log: log.WithValues("feed", name)}
		if kind == stores.KindPod {
			f.changed = podChanged
		}
		if err := f.register(context.Background(), mgr.GetCache()); err != nil {
			return nil, err
		}
		if err := mgr.Add(f); err != nil {
			return nil, err
		}
		opts.CatchUp.track(f)
		refeeder.feeds[name] = f
		b := ctrl.NewControllerManagedBy(mgr).Named(name).
			WatchesRawSource(f.source()).
			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)})
		for _, e := range extra {
			e(b)
		}
		return f, b.Complete(f)
	}

	pods := &podSync{handler: h, log: log.WithValues("feed", "pod-feed")}
	shard, sharded := mgr.GetCache().(*nodepods.Cache)
	if sharded {
		api := mgr.GetAPIReader()
		pods.vanished = func(ctx context.Context, key types.NamespacedName) (*corev1.Pod, bool, error) {
			return shard.Set.Vanished(ctx, api, key)
		}
	}
	var keepReservation func(context.Context, *v1alpha1.Reservation) (bool, error)
	var keepNMNode func(context.Context, *v1alpha1.NMNode) (bool, error)
	var keepCNR func(context.Context, *v1alpha1.CustomNodeResource) (bool, error)
	var keepSlice func(context.Context, *resourcev1.ResourceSlice) (bool, error)
	var podExtras, rsvExtras, perNodeExtras, sliceExtras []func(*builder.Builder)
	var err error
	if opts.NodeInScope != nil {
		if pods.keep, podExtras, err = scoped(mgr, &corev1.Pod{}, &corev1.PodList{}, opts.NodeInScope,
			func(p *corev1.Pod) string { return p.Spec.NodeName }, false, podScopeChanges); err != nil {
			return nil, err
		}
		// Indexing a kind creates its informer: only the kinds an enabled store handles.
		if slices.Contains(watched, stores.KindReservation) {
			if keepReservation, rsvExtras, err = scoped(mgr, &v1alpha1.Reservation{}, &v1alpha1.ReservationList{}, opts.NodeInScope,
				func(r *v1alpha1.Reservation) string { return r.Spec.NodeName }, false); err != nil {
				return nil, err
			}
		}
		// An NMNode or CNR follows its Node's shard, whatever its own labels say: a node that
		// left the shard must not stay offered through its agent's objects.
		keepNMNode = func(ctx context.Context, nm *v1alpha1.NMNode) (bool, error) { return opts.NodeInScope(ctx, nm.Name) }
		keepCNR = func(ctx context.Context, cnr *v1alpha1.CustomNodeResource) (bool, error) {
			return opts.NodeInScope(ctx, cnr.Name)
		}
		perNodeExtras = []func(*builder.Builder){sameNameAsNode}
		// A node-local slice belongs to its node's shard; a pool for node selectors or all
		// nodes (no spec.nodeName) reaches every shard, which attributes it to the nodes it holds.
		if slices.Contains(watched, stores.KindResourceSlice) {
			if keepSlice, sliceExtras, err = scoped(mgr, &resourcev1.ResourceSlice{}, &resourcev1.ResourceSliceList{}, opts.NodeInScope,
				func(s *resourcev1.ResourceSlice) string { return ptr.Deref(s.Spec.NodeName, "") }, true); err != nil {
				return nil, err
			}
		}
	}
	feeds := []struct {
		kind  stores.Kind
		obj   client.Object
		apply applyFunc
		extra []func(*builder.Builder)
	}{
		{stores.KindPod, &corev1.Pod{}, pods.apply, podExtras},
		{stores.KindNode, &corev1.Node{}, syncAs(log, stores.KindNode, delivered[*corev1.Node](h), nil), nil},
		{stores.KindNMNode, &v1alpha1.NMNode{}, syncAs(log, stores.KindNMNode, delivered[*v1alpha1.NMNode](h), keepNMNode), perNodeExtras},
		{stores.KindCNR, &v1alpha1.CustomNodeResource{}, syncAs(log, stores.KindCNR, delivered[*v1alpha1.CustomNodeResource](h), keepCNR), perNodeExtras},
		{stores.KindPodGroup, &v1alpha1.PodGroup{}, syncAs(log, stores.KindPodGroup, delivered[*v1alpha1.PodGroup](h), nil), nil},
		{stores.KindPDB, &policyv1.PodDisruptionBudget{}, syncAs(log, stores.KindPDB, delivered[*policyv1.PodDisruptionBudget](h), nil), nil},
		{stores.KindMovement, &v1alpha1.Movement{}, syncAs(log, stores.KindMovement, delivered[*v1alpha1.Movement](h), nil), nil},
		{stores.KindReservation, &v1alpha1.Reservation{}, syncAs(log, stores.KindReservation, delivered[*v1alpha1.Reservation](h), keepReservation), rsvExtras},
		{stores.KindResourceSlice, &resourcev1.ResourceSlice{}, syncAs(log, stores.KindResourceSlice, delivered[*resourcev1.ResourceSlice](h), keepSlice), sliceExtras},
		{stores.KindResourceClaim, &resourcev1.ResourceClaim{}, syncAs(log, stores.KindResourceClaim, delivered[*resourcev1.ResourceClaim](h), nil), nil},
		{stores.KindDeviceClass, &resourcev1.DeviceClass{}, syncAs(log, stores.KindDeviceClass, delivered[*resourcev1.DeviceClass](h), nil), nil},
	}
	for _, spec := range feeds {
		if !slices.Contains(watched, spec.kind) {
			continue
		}
		if spec.kind == stores.KindPodGroup && !opts.followsPodGroupSource(store.PodGroupSourceMulticache) {
			continue
		}
		f, err := feedOf(feedNames[spec.kind], spec.kind, spec.obj, spec.apply, spec.extra...)
		if err != nil {
			return nil, err
		}
		// A shard's pod leaving the unbound watch may be on its way to its node's.
		f.queueDeletes = spec.kind == stores.KindPod && sharded
	}
	if slices.Contains(watched, stores.KindPodGroup) {
		for _, spec := range podGroupSourceFeeds(log, h, opts) {
			if _, err := feedOf(spec.name, stores.KindPodGroup, spec.obj, spec.apply); err != nil {
				return nil, err
			}
		}
	}
	if slices.Contains(watched, stores.KindOwner) {
		for _, o := range ownerKinds {
			if _, err := feedOf(ownerFeedName(string(o.ownerType)), stores.KindOwner, o.obj, o.apply(log, h)); err != nil {
				return nil, err
			}
		}
	}
	// The status writers and the replacement controller write through one fenced client.
	writer, err := NewWriter(mgr, opts.Fence)
	if err != nil {
		return nil, err
	}
	if err := setupStatusWriters(mgr, h, n, watched, opts, writer); err != nil {
		return nil, err
	}
	if slices.Contains(watched, stores.KindReservation) {
		if err := setupReplacements(mgr, h, n, opts, writer); err != nil {
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

// scoped returns the keep filter of a kind bound to nodes (pods, reservations, slices) in a
// sub-cluster: kept only on a node of the sub-cluster; one on no node is kept when
// keepUnbound. It also returns a watch that re-reconciles a node's objects when the node
// joins or leaves (through a spec.nodeName index).
func scoped[T client.Object](mgr manager.Manager, obj T, list client.ObjectList, inScope func(context.Context, string) (bool, error),
	nodeOf func(T) string, keepUnbound bool, preds ...predicate.Predicate) (func(context.Context, T) (bool, error), []func(*builder.Builder), error) {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, nodeNameField,
		func(o client.Object) []string { return []string{nodeOf(o.(T))} }); err != nil {
		return nil, nil, err
	}
	keep := func(ctx context.Context, o T) (bool, error) {
		if node := nodeOf(o); node != "" {
			return inScope(ctx, node)
		}
		return keepUnbound, nil
	}
	reader := mgr.GetClient()
	nodeChanged := func(b *builder.Builder) {
		b.Watches(&corev1.Node{}, crhandler.EnqueueRequestsFromMapFunc(func(ctx context.Context, node client.Object) []reconcile.Request {
			return onNode(ctx, reader, list.DeepCopyObject().(client.ObjectList), node.GetName())
		}), builder.WithPredicates(preds...))
	}
	return keep, []func(*builder.Builder){nodeChanged}, nil
}

// podScopeChanges lets through only the Node events that change which pods a shard holds:
// a node joining after the initial list, or leaving. A shard's pods come through their
// node's own watch, started once the node is in the Node informer (nodepods.Set), so the
// pods of a node of the initial list, or of a node updated, need no second look; and each
// such look is a reconcile applying the cache's read, a copy of the pod's struct that the
// stores then keep besides the informer's own (9.5 of a shard's 61 MB of live heap at
// 7,500 pods, BENCHMARKS.md "Shards").
var podScopeChanges = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList },
	UpdateFunc: func(event.UpdateEvent) bool { return false },
}

// setupStatusWriters registers the status writers; they need leader election (the default)
// and reconcile nothing before the cache caught up.
func setupStatusWriters(mgr manager.Manager, h *handler.Handler, n *Notifier, watched []stores.Kind, opts Options, c client.Client) error {
	recorder := opts.Recorder
	writers := []struct {
		kind stores.Kind
		name string
		obj  client.Object
		r    reconcile.Reconciler
		// lagging lists what to write first when the writer starts (nil: nothing).
		lagging func() []types.NamespacedName
	}{
		{stores.KindPodGroup, "podgroup-status", &v1alpha1.PodGroup{}, &PodGroupStatusReconciler{Client: c, Reader: h, Clock: opts.Clock, Recorder: recorder}, nil},
		{stores.KindMovement, "movement-status", &v1alpha1.Movement{}, &MovementStatusReconciler{Client: c, Reader: h, ComponentName: opts.ComponentName, Clock: opts.Clock, Recorder: recorder}, nil},
		{stores.KindReservation, "reservation-status", &v1alpha1.Reservation{}, &ReservationStatusReconciler{Client: c, Reader: h, Clock: opts.Clock, GCGrace: opts.ReservationGCGrace, Recorder: recorder},
			func() []types.NamespacedName { return h.ReservationsWhere(statusLags) }},
	}
	for _, w := range writers {
		if !slices.Contains(watched, w.kind) {
			continue
		}
		if w.kind == stores.KindPodGroup && !opts.followsPodGroupSource(store.PodGroupSourceMulticache) {
			continue
		}
		if opts.NodeInScope != nil && w.kind != stores.KindReservation {
			// A sub-cluster sees only its part of a group or movement; writing that would
			// fight the other sub-clusters' writers.
			continue
		}
		err := ctrl.NewControllerManagedBy(mgr).Named(w.name).
			For(w.obj).
			WatchesRawSource(n.source(w.kind, w.lagging)).
			WithOptions(controller.Options{MaxConcurrentReconciles: statusWorkers}).
			Complete(opts.CatchUp.Gate(w.r))
		if err != nil {
			return err
		}
	}
	return nil
}

// statusWorkers is how many objects of one kind a status writer writes at once. Each write
// is one API round trip, independent of the others (controller-runtime never reconciles
// one key twice at a time): with one worker, 10,000 reservations expiring in the same
// second took the leader minutes to publish on a loaded API server.
const statusWorkers = 4
