package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/controllers"
	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/nodepods"
	"github.com/seed0f91f25e/multicache/internal/reconnect"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/siblings/freecapacity"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/verify"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// inClusterNamespaceFile exists only when running in a pod.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Operator is a configured, not yet started multicache.
type Operator struct {
	// Manager runs every controller and server.
	Manager manager.Manager
	// Cache is the cache handler: the ClusterEventsHandler reconcilers feed and the Reader
	// sibling controllers query.
	Cache *handler.Handler
	// CatchUp tells when the cache has applied everything the informers held at sync; add
	// sibling controllers with CatchUp.AfterCatchUp so that they start from a full view.
	CatchUp *controllers.CatchUp
	// Debug is the debug server, nil when --debug-bind-address=0.
	Debug *debug.Server
	// Verify is the verify loop: the manager runs it every --verify-period (unless 0) once
	// the cache caught up; Run checks once, on demand.
	Verify *verify.Loop
	// PodGroupSources are the APIs the PodGroupStore reads groups from (found by discovery
	// unless --podgroup-sources named them); nil when the store is disabled.
	PodGroupSources []store.PodGroupSource

	// lock is the leader-election lock, nil without leader election.
	lock *renewalLock
	// recorder records the Events of the writers and the siblings, fenced as their writes
	// (controllers.NewRecorder).
	recorder events.EventRecorder
	// opened records the informers the manager's cache opened.
	opened *openedInformers
}

// New builds the operator against the API server cfg points at.
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.ReservationTTLAliasUsed() {
		ctrl.Log.WithName("setup").Info("deprecated: --reservation-ttl without --reservation-default-ttl also sets the default lifetime of reservations without spec.ttlSeconds; "+
			"set --reservation-default-ttl for that (--reservation-ttl is how long a deleted pod annotated multicache.dev/reserve-on-delete keeps its place)",
			"reservationTTL", opts.ReservationTTL)
	}
	if ttl, clamped := opts.holdTTL(); clamped {
		ctrl.Log.WithName("setup").Info("--reservation-ttl is longer than a Reservation may last: a deleted pod's place is kept for the maximum instead",
			"reservationTTL", opts.ReservationTTL, "holdTTL", ttl)
		opts.ReservationTTL = ttl
	}
	// Before anything listens: a source that is not served stops start-up here.
	opts, err := withoutUnservedDevices(cfg, opts, ctrl.Log.WithName("devices"))
	if err != nil {
		return nil, err
	}
	sources, err := resolvePodGroupSources(cfg, opts, ctrl.Log.WithName("podgroup-sources"))
	if err != nil {
		return nil, err
	}
	var lock *renewalLock
	if opts.LeaderElect {
		_, renewDeadline, _ := opts.leaseTimings()
		var err error
		if lock, err = newRenewalLock(cfg, leaderNamespace(opts), opts.LeaseName(), renewDeadline); err != nil {
			return nil, fmt.Errorf("creating the leader-election lock: %w", err)
		}
	}
	opened := &openedInformers{}
	mgr, err := newManager(cfg, opts, lock, opened)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	h, err := newCache(mgr, opts, sources)
	if err != nil {
		return nil, err
	}
	catchUp := controllers.NewCatchUp(ctrl.Log.WithName("catch-up"), nil)
	op := &Operator{Manager: mgr, Cache: h, CatchUp: catchUp, PodGroupSources: sources, lock: lock, opened: opened}
	if err := mgr.Add(catchUp); err != nil {
		return nil, err
	}
	if op.recorder, err = controllers.NewRecorder(mgr, fenceOf(lock)); err != nil {
		return nil, err
	}
	notifier := controllers.NewNotifier()
	h.SetStatusNotifier(notifier.ObjectChanged)
	inScope := nodeInScope(mgr.GetClient(), opts)
	refeeder, err := controllers.Setup(mgr, h, notifier, controllers.Options{
		NodeInScope: inScope, ReservationGCGrace: opts.ReservationGCGrace, ComponentName: opts.ComponentName, Clock: opts.Clock,
		CatchUp: catchUp, Fence: fenceOf(lock), Recorder: op.recorder, PodGroupSources: sources,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up controllers: %w", err)
	}
	// Assumed-pod and hold expiry run on every replica, the reservation reaper on the leader
	// only (it decides expiries), both from a caught-up cache: a reservation must not expire
	// before the pod that consumed it was fed.
	if err := mgr.Add(catchUp.AfterCatchUp(false, h.StartExpiry)); err != nil {
		return nil, err
	}
	if err := mgr.Add(catchUp.AfterCatchUp(true, h.StartReaper)); err != nil {
		return nil, err
	}
	keep := keepInSubCluster(inScope, opts)
	// The debug server binds its address here (a bad one fails New); a later failure of
	// New must let it go, or a second New in the process finds it taken.
	var debugListener io.Closer
	built := false
	defer func() {
		if !built && debugListener != nil {
			_ = debugListener.Close()
		}
	}()
	if opts.DebugBindAddress != "0" {
		listings := controllers.DriftListings(sources)
		var api client.Reader = mgr.GetAPIReader()
		if opts.TrimAtDecode {
			if api, err = compareReader(cfg, mgr.GetScheme(), mgr.GetRESTMapper(), listings); err != nil {
				return nil, fmt.Errorf("creating the client of /debug/cache/compare: %w", err)
			}
		}
		op.Debug = debug.NewServer(opts.DebugBindAddress, h, api, keep, ctrl.Log.WithName("debug"))
		op.Debug.Listings = listings
		if shard, ok := mgr.GetCache().(*nodepods.Cache); ok {
			// A shard compares the pods of its nodes, listed node by node.
			op.Debug.Source = drift.NodePods{API: drift.APISource{Reader: mgr.GetAPIReader()}, Nodes: shard.Set.Nodes}
		} else if keep == nil {
			// Keys and versions are all the comparison reads: its lists are read as they
			// arrive, without decoding an object.
			if op.Debug.Source, err = compareStream(cfg, mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetRESTMapper(), api); err != nil {
				return nil, err
			}
		}
		srv, err := op.Debug.Runnable()
		if err != nil {
			return nil, err
		}
		debugListener = srv.Listener
		if err := mgr.Add(srv); err != nil {
			return nil, err
		}
	}
	op.Verify = &verify.Loop{
		Cache: h, Source: drift.InformerSource{Informers: mgr.GetCache()}, Keep: keep, Refeed: refeeder.Refeed,
		Period: opts.VerifyPeriod, Log: ctrl.Log.WithName("verify"), Listings: controllers.DriftListings(sources),
	}
	if opts.VerifyPeriod > 0 {
		if err := mgr.Add(catchUp.AfterCatchUp(false, op.Verify.Start)); err != nil {
			return nil, err
		}
	}
	if err := op.startSiblings(opts, ctrl.Log, ctrlmetrics.Registry); err != nil {
		return nil, err
	}
	if err := registerMetrics(metrics.ControllerRuntime, h); err != nil {
		return nil, err
	}
	if err := op.addProbes(); err != nil {
		return nil, err
	}
	built = true
	return op, nil
}

// newManager creates the manager: its informers strip managedFields (and keep of the workload
// owners only what the owner feed reads; pods share their resource lists), hand out shared objects (the cache never modifies
// them, and keeping one copy halves the memory of every pod), and in a sub-cluster watch
// only that sub-cluster's nodes.
func newManager(cfg *rest.Config, opts Options, lock *renewalLock, opened *openedInformers) (manager.Manager, error) {
	metricsOpts := metricsserver.Options{BindAddress: opts.MetricsBindAddress, SecureServing: opts.MetricsSecure}
	if opts.MetricsCertPath != "" {
		// controller-runtime watches the files and serves what they hold when rotated
		// (Validate checked they load: it would silently fall back to a self-signed one).
		metricsOpts.CertDir, metricsOpts.CertName, metricsOpts.KeyName = opts.MetricsCertPath, opts.MetricsCertName, opts.MetricsCertKey
	}
	var authorize func(*rest.Config, *http.Client) (metricsserver.Filter, error)
	if opts.MetricsSecure {
		authorize = filters.WithAuthenticationAndAuthorization
	}
	// A read naming only multicache's families gathers only their collectors (metrics.Served).
	metricsOpts.FilterProvider = metrics.ControllerRuntime.FilterProvider(authorize)
	if !opts.EnableHTTP2 {
		metricsOpts.TLSOpts = append(metricsOpts.TLSOpts, disableHTTP2)
	}
	ready, err := reconnect.Readyz(cfg)
	if err != nil {
		return nil, err
	}
	cacheOpts := cacheOptions(opts)
	cacheOpts.NewInformer = reconnectingInformer(ctrl.Log.WithName("reconnect"), ready, opened)
	if opts.TrimAtDecode {
		// The cache's lists and watches skip at decode what the transforms drop (wiretrim.go).
		if cacheOpts.HTTPClient, err = cacheHTTPClient(cfg, opts.WholePods); err != nil {
			return nil, fmt.Errorf("creating the HTTP client of the cache: %w", err)
		}
	}
	var newCache cache.NewCacheFunc
	if opts.SubClusterKey != "" {
		// A shard watches the pods of its nodes only, one watch per node (nodepods).
		newCache = nodepods.NewCacheFunc(ctrl.Log.WithName("shard-pods"),
			reconnecting(ctrl.Log.WithName("reconnect"), ready, opened, &corev1.Pod{}))
	}
	lease, renew, retry := opts.leaseTimings()
	elect, lockIface := opts.LeaderElect, lockInterface(lock)
	if opts.Leading != nil {
		// Embedded: the embedding component's election gates the leader-only runnables.
		elect, lockIface = true, newGateLock(opts.Leading, opts.ComponentName+"-embedded", lease)
	}
	return ctrl.NewManager(cfg, ctrl.Options{
		NewCache:                newCache,
		Scheme:                  scheme.New(),
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		LeaderElection:          elect,
		LeaderElectionID:        opts.LeaseName(),
		LeaderElectionNamespace: leaderNamespace(opts),
		LeaseDuration:           &lease,
		RenewDeadline:           &renew,
		RetryPeriod:             &retry,
		// The standby takes over as soon as the leader steps down on SIGTERM.
		LeaderElectionReleaseOnCancel: true,
		// client-go's Lease lock, remembering renewals so that status writes can be fenced.
		// controller-runtime's doc says the timings above are ignored with a lock of one's own;
		// its code passes them to the elector (TestLeaderElection_TheElectorUsesTheOptionsTimings).
		LeaderElectionResourceLockInterface: lockIface,
		Cache:                               cacheOpts,
		Controller:                          config.Controller{SkipNameValidation: ptr.To(opts.SkipControllerNameValidation)},
	})
}

// cacheOptions are the cache's transforms and selectors.
func cacheOptions(opts Options) cache.Options {
	cacheOpts := cache.Options{
		DefaultTransform:             cache.TransformStripManagedFields(),
		DefaultUnsafeDisableDeepCopy: ptr.To(true),
		ByObject:                     ownerTransforms(),
	}
	// Pods share their resource lists and leave out what only the kubelet reads
	// (podTransform); a shard's per-node watches take it too.
	cacheOpts.ByObject[&corev1.Pod{}] = cache.ByObject{Transform: podTransform(newSharedResourceLists(), opts.WholePods)}
	if opts.SubClusterKey != "" {
		// Only the Nodes are selected by label: an NMNode or CNR follows its Node's shard
		// (the feeds filter them by name), whatever labels its agent gave it.
		cacheOpts.ByObject[&corev1.Node{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{opts.SubClusterKey: opts.SubCluster})}
	}
	return cacheOpts
}

// disableHTTP2 offers only HTTP/1.1 in the TLS handshake (see Options.EnableHTTP2).
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }

// newCache builds the CacheHandler from the options and the handler with its stores.
func newCache(mgr manager.Manager, opts Options, sources []store.PodGroupSource) (*handler.Handler, error) {
	enabled := make([]stores.Name, len(opts.Stores))
	for i, s := range opts.Stores {
		enabled[i] = stores.Name(s)
	}
	stop := closeOnStop(make(chan struct{}))
	if err := mgr.Add(stop); err != nil {
		return nil, err
	}
	cfg, err := stores.NewCacheHandler(stores.Config{
		ComponentName:         opts.ComponentName,
		SchedulerType:         opts.SchedulerName,
		SubClusterKey:         opts.SubClusterKey,
		SubCluster:            opts.SubCluster,
		EnabledStores:         enabled,
		KnownStores:           opts.registry().Names(),
		PodAssumedTTL:         opts.PodAssumedTTL,
		Period:                opts.Period,
		ReservationTTL:        opts.ReservationTTL,
		ReservationDefaultTTL: opts.ReservationDefaultTTL,
		Accounting:            store.Accounting{DRANodeAllocatableResources: opts.DRANodeAllocatableResources},
		StopCh:                stop,
		PodReader:             mgr.GetClient(),
		Clock:                 opts.Clock,
		PodGroupSources:       sources,
	})
	if err != nil {
		return nil, fmt.Errorf("configuring the cache: %w", err)
	}
	h, err := handler.NewFromRegistry(cfg, opts.registry(), ctrl.Log.WithName("cache"))
	if err != nil {
		return nil, fmt.Errorf("building the stores: %w", err)
	}
	return h, nil
}

// nodeInScope reports whether a node belongs to the sub-cluster (nil without one): the
// manager's cache holds only the sub-cluster's nodes.
func nodeInScope(cached client.Reader, opts Options) func(context.Context, string) (bool, error) {
	if opts.SubClusterKey == "" {
		return nil
	}
	return func(ctx context.Context, node string) (bool, error) {
		err := cached.Get(ctx, types.NamespacedName{Name: node}, &corev1.Node{})
		return err == nil, client.IgnoreNotFound(err)
	}
}

// keepInSubCluster tells the comparisons (debug and verify) which cluster objects belong in
// a sub-cluster's cache: the nodes labelled into it, their NMNodes and CNRs (by name), and
// the pods and reservations on them.
func keepInSubCluster(inScope func(context.Context, string) (bool, error), opts Options) drift.KeepFunc {
	if inScope == nil {
		return nil
	}
	return func(ctx context.Context, kind stores.Kind, obj client.Object) (bool, error) {
		var node string
		switch o := obj.(type) {
		case *corev1.Pod:
			node = o.Spec.NodeName
		case *v1alpha1.Reservation:
			node = o.Spec.NodeName
		case *v1alpha1.NMNode, *v1alpha1.CustomNodeResource:
			node = o.GetName()
		case *resourcev1.ResourceSlice:
			// A pool for node selectors or all nodes reaches every shard.
			if o.Spec.NodeName == nil || *o.Spec.NodeName == "" {
				return true, nil
			}
			node = *o.Spec.NodeName
		default:
			if kind == stores.KindNode {
				return obj.GetLabels()[opts.SubClusterKey] == opts.SubCluster, nil
			}
			return true, nil
		}
		if node == "" {
			return false, nil
		}
		return inScope(ctx, node)
	}
}

// gauges is the collector of the cache gauges currently registered.
var gauges struct {
	sync.Mutex
	current prometheus.Collector
}

// registerMetrics registers the metrics on the controller-runtime registry. The counters and
// histograms are process-wide; the gauges read one cache, the latest built (a process runs
// one operator; tests run several in turn).
func registerMetrics(reg prometheus.Registerer, h *handler.Handler) error {
	err := metrics.Register(reg, freecapacity.LowNodes)
	var already prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("registering metrics: %w", err)
	}
	gauges.Lock()
	defer gauges.Unlock()
	if gauges.current != nil {
		reg.Unregister(gauges.current)
	}
	gauges.current = handler.NewCollector(h)
	if err := reg.Register(gauges.current); err != nil {
		return fmt.Errorf("registering cache gauges: %w", err)
	}
	return nil
}

// Start runs the operator until ctx is cancelled (SIGTERM or SIGINT in main), or until this
// replica, having led, fails to renew its lease within the renew deadline: controller-runtime
// then returns "leader election lost", the process exits and restarts as a standby. Its
// writes stopped before (see renewalLock.Fence).
func (o *Operator) Start(ctx context.Context) error { return o.Manager.Start(ctx) }

// Ready reports whether the cache caught up (what /readyz answers).
func (o *Operator) Ready() bool { return o.CatchUp.CaughtUp() }

// addProbes registers /healthz (the process serves) and /readyz (the cache caught up: every
// feed applied every object its informer held at sync, so the cache reflects the cluster).
func (o *Operator) addProbes() error {
	if err := o.Manager.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding healthz check: %w", err)
	}
	if err := o.Manager.AddReadyzCheck("cache-caught-up", func(*http.Request) error {
		if !o.CatchUp.CaughtUp() {
			return fmt.Errorf("the cache has not caught up yet: %s", o.CatchUp.Status())
		}
		return nil
	}); err != nil {
		return fmt.Errorf("adding readyz check: %w", err)
	}
	return nil
}

// leaderNamespace is the namespace of the Lease: the option, else "" in a cluster (the pod's
// namespace), else "default".
func leaderNamespace(opts Options) string {
	if opts.LeaderElectionNamespace != "" {
		return opts.LeaderElectionNamespace
	}
	if _, err := os.Stat(inClusterNamespaceFile); err != nil {
		return "default"
	}
	return ""
}

// lockInterface returns lock as a resourcelock.Interface, nil without one (a nil
// *renewalLock must not become a non-nil interface).
func lockInterface(lock *renewalLock) resourcelock.Interface {
	if lock == nil {
		return nil
	}
	return lock
}

// fenceOf returns the fence of the status writers, nil without leader election.
func fenceOf(lock *renewalLock) controllers.Fence {
	if lock == nil {
		return nil
	}
	return lock.Fence
}

// closeOnStop is the stores' StopCh (store.Handle): closed when the manager stops, on every
// replica (a standby's stores run too).
type closeOnStop chan struct{}

// Start implements manager.Runnable.
func (c closeOnStop) Start(ctx context.Context) error {
	<-ctx.Done()
	close(c)
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica.
func (closeOnStop) NeedLeaderElection() bool { return false }
