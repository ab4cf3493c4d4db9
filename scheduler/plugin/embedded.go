package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

// embedded is the process's one multicache: started by the first profile's plugin, shared
// by the others.
type embedded struct {
	leading <-chan struct{}

	mu   sync.Mutex
	op   *multicache.Operator
	args Args
	run  *run
}

// run is one start of the cache: stopped is closed when it stops, err then says why.
type run struct {
	stopped chan struct{}
	err     error
}

// readyPoll is how often start checks whether the cache caught up.
const readyPoll = 100 * time.Millisecond

// start starts the cache against the scheduler's kubeconfig, once, and waits until it
// caught up: until then the cache would show a node with only part of its pods, no holds,
// gangs without members. Later calls return the same cache, or an error when their args
// ask for another.
func (e *embedded) start(ctx context.Context, cfg *rest.Config, args Args, log logr.Logger) (*multicache.Operator, *run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.op != nil {
		if *args.LeaderWork != *e.args.LeaderWork || !slices.Equal(args.MulticacheFlags, e.args.MulticacheFlags) {
			return nil, nil, fmt.Errorf("%s plugin: every profile shares one cache: leaderWork and multicacheFlags must be the same in every profile", Name)
		}
		return e.op, e.run, nil
	}
	opts, err := multicache.NewCommand().Options(args.flags())
	if err != nil {
		return nil, nil, fmt.Errorf("%s plugin: multicacheFlags: %w", Name, err)
	}
	// multicache logs through controller-runtime's logger: the scheduler's, named.
	ctrl.SetLogger(log.WithName("multicache"))
	var leading <-chan struct{}
	if *args.LeaderWork {
		leading = e.leading
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "multicache-scheduler/" + Name
	// kube-scheduler's client speaks protobuf, which multicache's own objects (a
	// Reservation the leader creates) cannot be encoded in; multicache asks for protobuf
	// itself where it reads built-in kinds.
	cfg.ContentType, cfg.AcceptContentTypes = "", ""
	op, err := multicache.NewEmbedded(cfg, opts, leading)
	if err != nil {
		return nil, nil, fmt.Errorf("%s plugin: building the cache: %w", Name, err)
	}
	r := &run{stopped: make(chan struct{})}
	go func() {
		defer close(r.stopped)
		if r.err = op.Start(ctx); r.err != nil {
			log.Error(r.err, "multicache stopped: no pod is scheduled until the scheduler restarts")
			return
		}
		r.err = errors.New("multicache stopped")
	}()
	log.Info("Waiting for multicache to catch up with the cluster", "leaderWork", *args.LeaderWork, "stores", op.StoreNames())
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for !op.Ready() {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-r.stopped:
			return nil, nil, fmt.Errorf("%s plugin: multicache stopped before it caught up: %w", Name, r.err)
		case <-tick.C:
		}
	}
	log.Info("multicache caught up")
	e.op, e.args, e.run = op, args, r
	return op, r, nil
}

// failure is why the cache stopped; nil while it runs.
func (r *run) failure() error {
	select {
	case <-r.stopped:
		return r.err
	default:
		return nil
	}
}
