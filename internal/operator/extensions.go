package operator

import (
	"context"
	"fmt"
	"reflect"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seed0f91f25e/multicache/internal/controllers"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/siblings/freecapacity"
)

// Sibling is a controller that runs in the operator's process and reads the cache in
// process. It starts once the cache caught up, on every replica unless it needs leader
// election (a sibling that writes to the API must).
type Sibling interface {
	Start(ctx context.Context) error
	NeedLeaderElection() bool
}

// SiblingDeps are what a sibling is built from.
type SiblingDeps struct {
	// Manager is the operator's manager: its client, informers and API reader. Its client
	// and its event recorder are not fenced: write with Writer and Recorder.
	Manager manager.Manager
	// Cache is the cache handler, for the built-in siblings. pkg/multicache never hands it
	// to a registered sibling: it builds that one's deps with a read-only Reader and an
	// Assumer wrapping it.
	Cache *handler.Handler
	// Options are the operator's options (after the flags).
	Options Options
	// Metrics is controller-runtime's registry, where the operator's metrics are: a
	// sibling registers its own here (tolerating prometheus.AlreadyRegisteredError when a
	// test builds several operators in one process).
	Metrics prometheus.Registerer
	// Log is the operator's root logger: a sibling names its own (Log.WithName).
	Log logr.Logger
	// Writer is the client a sibling writes to the API with, fenced as the status writers'
	// (controllers.NewWriter): reads come from the manager's cache, and a write is refused
	// unsent, or cut at the lease's renew deadline, when this replica may no longer lead.
	Writer client.Client
	// Recorder records Events under the same fence (controllers.NewRecorder).
	Recorder events.EventRecorder
}

// SiblingFactory builds a sibling; an error stops the start-up. A factory returns no
// sibling and no error to stay off with these options (its store disabled, its flag 0).
type SiblingFactory func(SiblingDeps) (Sibling, error)

// registry returns the stores --stores chooses from: Options.Registry, else the built-ins.
func (o *Options) registry() handler.Registry {
	if o.Registry != nil {
		return o.Registry
	}
	return handler.BuiltIn()
}

// knownStores returns the names of the registered stores.
func (o *Options) knownStores() []string {
	return names(o.registry().Names())
}

// freeCapacity is the built-in sibling, registered the way an out-of-tree one is: off when
// --low-free-threshold is 0.
func freeCapacity(d SiblingDeps) (Sibling, error) {
	if d.Options.LowFreeThreshold <= 0 {
		return nil, nil
	}
	return freecapacity.New(d.Cache, d.Options.LowFreeThreshold, d.Options.LowFreePeriod, d.Log.WithName("free-capacity")), nil
}

// startSiblings builds the built-in and the registered siblings and adds them to the
// manager, each started once the cache caught up.
func (op *Operator) startSiblings(opts Options, log logr.Logger, metrics prometheus.Registerer) error {
	writer, err := controllers.NewWriter(op.Manager, fenceOf(op.lock))
	if err != nil {
		return fmt.Errorf("the siblings' client: %w", err)
	}
	deps := SiblingDeps{Manager: op.Manager, Cache: op.Cache, Options: opts, Metrics: metrics, Log: log,
		Writer: writer, Recorder: op.recorder}
	if err := op.addSibling(freeCapacity, deps); err != nil {
		return fmt.Errorf("building the free-capacity sibling: %w", err)
	}
	for i, factory := range opts.Siblings {
		if factory == nil {
			return fmt.Errorf("sibling %d has no factory", i)
		}
		if err := op.addSibling(factory, deps); err != nil {
			return fmt.Errorf("building sibling %d: %w", i, err)
		}
	}
	return nil
}

func (op *Operator) addSibling(factory SiblingFactory, deps SiblingDeps) error {
	s, err := factory(deps)
	if err != nil || s == nil {
		return err
	}
	if v := reflect.ValueOf(s); v.Kind() == reflect.Pointer && v.IsNil() {
		// A nil pointer in the interface is not "no sibling": it would panic once started.
		return fmt.Errorf("the factory returned a nil %T; return nil, nil to stay off", s)
	}
	return op.Manager.Add(op.CatchUp.AfterCatchUp(s.NeedLeaderElection(), s.Start))
}
