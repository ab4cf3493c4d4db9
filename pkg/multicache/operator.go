package multicache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/memlimit"
	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// StoreFactory builds a store registered with WithStore from the handle every store gets;
// an error stops the start-up and is reported with the store's name.
type StoreFactory func(h store.Handle) (store.Store, error)

// Sibling is a controller that runs in multicache's process and reads the cache in
// process. It starts once the cache caught up, on every replica unless it needs leader
// election (a sibling that writes to the API must).
type Sibling interface {
	Start(ctx context.Context) error
	NeedLeaderElection() bool
}

// SiblingDeps are what a sibling is built from.
type SiblingDeps struct {
	// Manager is the operator's manager: its client, informers and API reader. Objects
	// read through its client and informers are the cache's own and share maps and slices
	// (a pod's labels, owners, tolerations and resource lists with the other pods of its
	// workload): change a deep copy, never them (docs/EXTENDING.md). Its client and event
	// recorder are not fenced: write with Writer and Recorder.
	Manager manager.Manager
	// Reader reads the cache (read-only; snapshots for the stores registered out of tree).
	Reader Reader
	// Assumer is for a sibling that schedules: assume, finish-binding and forget of pods,
	// assume and forget of claims' allocations, through the cache's state machine. A
	// sibling that only reads ignores it.
	Assumer Assumer
	// Options are the operator's options (after the flags).
	Options Options
	// Metrics is controller-runtime's registry, where the operator's metrics are: a
	// sibling registers its own here (tolerating prometheus.AlreadyRegisteredError when a
	// test builds several operators in one process).
	Metrics prometheus.Registerer
	// Log is the operator's root logger: a sibling names its own (Log.WithName).
	Log logr.Logger
	// Writer is the client a sibling writes to the API with. Reads come from the manager's
	// cache; every write is fenced by the leader-election lease as multicache's own status
	// writes are: refused unsent when this replica does not hold the lease, and each attempt
	// cut at the lease's renew deadline counted from its last renewal (another replica may
	// lead after it). Without leader election, and in a cache embedded with NewEmbedded
	// (whose leader signal comes from the embedding component), it is the manager's client.
	Writer client.Client
	// Recorder records Events under the same fence: one recorded without the lease is
	// dropped.
	Recorder EventRecorder
	// Accounting is how the cache charges a pod to its node, with the operator's feature
	// settings (--dra-node-allocatable-resources): a sibling that adds up requests itself
	// calls Accounting.PodRequests, and agrees with NodeInfo's Requested.
	Accounting store.Accounting
}

// SiblingFactory builds a sibling; an error stops the start-up. It returns no sibling and
// no error to stay off with these options (the store it reads disabled).
type SiblingFactory func(SiblingDeps) (Sibling, error)

// Options are the operator's options, as Command.Options parses them from the command
// line (every option is a flag; -h lists them).
type Options struct {
	o operator.Options
	// steadyGOGC is --steady-gogc: the GC percent an embedded operator sets once caught up.
	steadyGOGC int
}

// Stores returns the names of the enabled stores (--stores).
func (o Options) Stores() []string { return slices.Clone(o.o.Stores) }

// StoreEnabled reports whether the store of that name is enabled.
func (o Options) StoreEnabled(name store.Name) bool {
	return stores.Required(name) || slices.Contains(o.o.Stores, string(name))
}

// SetSkipControllerNameValidation lets several operators run in one process (tests):
// controller-runtime refuses two controllers of one name otherwise.
func (o *Options) SetSkipControllerNameValidation(skip bool) { o.o.SkipControllerNameValidation = skip }

// Operator is a built, not yet started multicache: Start runs it.
type Operator struct {
	op *operator.Operator
	// steadyGOGC is the GC percent Start sets once the cache caught up (NewEmbedded's; 0:
	// none).
	steadyGOGC int
}

// New builds the operator against cfg with opts (from Command.Options), not started.
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	op, err := operator.New(cfg, opts.o)
	if err != nil {
		return nil, err
	}
	return &Operator{op: op}, nil
}

// Start runs the operator until ctx is done.
func (o *Operator) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a start that fails never catches up: the wait below ends with it
	if o.steadyGOGC > 0 {
		go func() {
			select {
			case <-o.op.CatchUp.Done():
				memlimit.Steady(o.steadyGOGC)
			case <-ctx.Done():
			}
		}()
	}
	return o.op.Start(ctx)
}

// Ready reports whether the cache caught up (what /readyz answers).
func (o *Operator) Ready() bool { return o.op.Ready() }

// Reader is the cache's read-only API, the one siblings get.
func (o *Operator) Reader() Reader { return readerOf(o.op.Cache) }

// Assumer is the cache's assume/forget API, the one siblings get.
func (o *Operator) Assumer() Assumer { return assumer{o.op.Cache} }

// StoreNames returns the enabled stores in fan-out order.
func (o *Operator) StoreNames() []string { return names(o.op.Cache.StoreNames()) }

// WatchedKinds returns the kinds some enabled store handles: the only ones watched.
func (o *Operator) WatchedKinds() []string { return names(o.op.Cache.WatchedKinds()) }

// DebugHandler serves /debug/cache and /debug/pprof as the debug server does; nil when
// --debug-bind-address=0.
func (o *Operator) DebugHandler() http.Handler {
	if o.op.Debug == nil {
		return nil
	}
	return o.op.Debug.Handler()
}

// Verify runs the verify loop once: it checks every store's invariants and compares the
// cache with the informers. The error lists what did not hold and the drift found; nil
// when the cache is right.
func (o *Operator) Verify(ctx context.Context) error {
	res, err := o.op.Verify.Run(ctx)
	if err != nil {
		return err
	}
	errs := slices.Clone(res.Violations)
	for _, d := range res.Drift {
		errs = append(errs, fmt.Errorf("drift: %s %s %s (cache %q, API %q)", d.Kind, d.Key, d.Problem, d.CacheVersion, d.APIVersion))
	}
	return errors.Join(errs...)
}

// siblingFactory adapts a public factory to the operator's: the sibling gets the Reader
// and the Assumer wrapping the handler, never the handler.
func siblingFactory(f SiblingFactory) operator.SiblingFactory {
	return func(d operator.SiblingDeps) (operator.Sibling, error) {
		s, err := f(SiblingDeps{Manager: d.Manager, Reader: readerOf(d.Cache), Assumer: assumer{d.Cache},
			Options: Options{o: d.Options}, Metrics: d.Metrics, Log: d.Log, Writer: d.Writer, Recorder: d.Recorder,
			Accounting: d.Cache.Config().Accounting()})
		if s == nil {
			return nil, err
		}
		return s, err
	}
}

// storeFactory adapts a public factory to the handler's: the store gets the CacheHandler
// wrapped as a store.Handle, never the CacheHandler itself.
func storeFactory(f StoreFactory) handler.Factory {
	if f == nil {
		return nil
	}
	return func(h *stores.CacheHandler) (store.Store, error) { return f(stores.PublicHandle(h)) }
}

func names[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, n := range in {
		out[i] = string(n)
	}
	return out
}

// EventRecorder records Events (events.k8s.io/v1) about objects: the method of client-go's
// tools/events.EventRecorder, declared here so that the public API names no type of a
// library's internal package (client-go's is an alias of one).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}
