package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// inClusterNamespaceFile exists only when running in a pod.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Operator is a configured, not yet started multicache.
type Operator struct {
	// Manager runs every controller and server.
	Manager manager.Manager

	synced atomic.Bool
}

// New builds the operator against the API server cfg points at.
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   opts.MetricsBindAddress,
		SecureServing: opts.MetricsSecure,
	}
	if opts.MetricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	leaderNamespace := opts.LeaderElectionNamespace
	if leaderNamespace == "" {
		if _, err := os.Stat(inClusterNamespaceFile); err != nil {
			leaderNamespace = "default"
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        opts.LeaderElectionID,
		LeaderElectionNamespace: leaderNamespace,
		// The standby takes over as soon as the leader steps down on SIGTERM.
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{
			// managedFields are never read and would double the memory of every object.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	op := &Operator{Manager: mgr}
	if err := op.addProbes(); err != nil {
		return nil, err
	}
	return op, nil
}

// Start runs the operator until ctx is cancelled (SIGTERM or SIGINT in main).
func (o *Operator) Start(ctx context.Context) error {
	return o.Manager.Start(ctx)
}

// addProbes registers /healthz (the process serves) and /readyz (the informers have synced,
// so the cache reflects the cluster).
func (o *Operator) addProbes() error {
	if err := o.Manager.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding healthz check: %w", err)
	}
	if err := o.Manager.AddReadyzCheck("cache-synced", func(*http.Request) error {
		if !o.synced.Load() {
			return errors.New("informers have not synced yet")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("adding readyz check: %w", err)
	}
	return o.Manager.Add(everyReplica(func(ctx context.Context) error {
		if o.Manager.GetCache().WaitForCacheSync(ctx) {
			o.synced.Store(true)
		}
		return nil
	}))
}

// everyReplica is a runnable that runs on every replica, leader or not.
type everyReplica func(context.Context) error

// Start implements manager.Runnable.
func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection implements manager.LeaderElectionRunnable: standbys run it too.
func (everyReplica) NeedLeaderElection() bool { return false }
