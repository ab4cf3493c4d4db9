package controllers

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/metrics"
)

// CatchUp knows whether the cache has caught up with the cluster: every feed applied every
// object its informer held at sync. It is the standard signal, as kube-scheduler readies
// its cache: each feed's handler registration HasSynced (client-go: the informer synced and
// the handler returned for every object of the initial list; the feeds apply in the
// handler, so returned means applied), plus the initial objects whose apply failed and are
// being retried from the feed's queue.
//
// Everything that acts on the cache's view waits for Done: /readyz, the status writers,
// the reaper, the reservation GC, the verify loop and the sibling controllers. Standbys run
// the feeds too, so a standby that takes over is caught up already.
type CatchUp struct {
	log   logr.Logger
	clock clock.PassiveClock

	mu    sync.Mutex
	feeds []*feed

	start    time.Time
	caughtUp atomic.Bool
	done     chan struct{}
	// took and applied are set once caught up.
	took    time.Duration
	applied int64
}

// NewCatchUp returns a tracker; Setup adds the feeds before the manager starts.
func NewCatchUp(log logr.Logger, clk clock.PassiveClock) *CatchUp {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &CatchUp{log: log, clock: clk, done: make(chan struct{}), start: clk.Now()}
}

// track adds a feed.
func (c *CatchUp) track(f *feed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.feeds = append(c.feeds, f)
}

// Done is closed once the cache has caught up.
func (c *CatchUp) Done() <-chan struct{} { return c.done }

// CaughtUp reports whether the cache has caught up.
func (c *CatchUp) CaughtUp() bool { return c.caughtUp.Load() }

// Wait blocks until the cache caught up or ctx is done (then it returns ctx's error).
func (c *CatchUp) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status describes what is still missing, for the readiness probe and logs.
func (c *CatchUp) Status() string {
	if c.caughtUp.Load() {
		return "caught up"
	}
	var parts []string
	for _, f := range c.tracked() {
		if s := f.status(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

func (c *CatchUp) tracked() []*feed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*feed(nil), c.feeds...)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica catches up.
func (c *CatchUp) NeedLeaderElection() bool { return false }

// catchUpPoll is how often the feeds' HasSynced are read (client-go's WaitForCacheSync polls
// every 100 ms).
const catchUpPoll = 20 * time.Millisecond

// Start implements manager.Runnable (every replica): it waits until every feed applied its
// initial list, logging what is missing every 10 s, then closes Done.
func (c *CatchUp) Start(ctx context.Context) error {
	c.mu.Lock()
	c.start = c.clock.Now()
	c.mu.Unlock()
	lastLog := c.clock.Now()
	err := wait.PollUntilContextCancel(ctx, catchUpPoll, true, func(context.Context) (bool, error) {
		for _, f := range c.tracked() {
			if !f.synced() {
				if c.clock.Since(lastLog) >= 10*time.Second {
					lastLog = c.clock.Now()
					c.log.Info("waiting for the cache to catch up", "missing", c.Status(), "elapsed", c.clock.Since(c.start).Round(time.Millisecond).String())
				}
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil // stopped before catching up
	}
	c.finish()
	return nil
}

// finish records the catch-up and closes Done.
func (c *CatchUp) finish() {
	feeds := c.tracked()
	perFeed := make([]any, 0, 2*len(feeds))
	var applied int64
	for _, f := range feeds {
		n := f.initial.Load()
		applied += n
		perFeed = append(perFeed, f.name, n)
	}
	c.mu.Lock()
	c.took = c.clock.Since(c.start)
	c.applied = applied
	took := c.took
	c.mu.Unlock()
	metrics.CatchUpSeconds.Set(took.Seconds())
	metrics.CatchUpObjects.Set(float64(applied))
	metrics.CaughtUp.Set(1)
	c.caughtUp.Store(true)
	close(c.done)
	c.log.Info("cache caught up: every feed applied what its informer held at sync",
		append([]any{"took", took.Round(time.Millisecond).String(), "objects", applied}, perFeed...)...)
}

// Result returns how long catching up took and how many objects the informers' initial
// lists held; zeros until caught up.
func (c *CatchUp) Result() (time.Duration, int) {
	if !c.caughtUp.Load() {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.took, int(c.applied)
}

// Gate wraps a reconciler so that it runs only once the cache caught up: a status written
// from a half-fed cache would be false (a running group reported timed out with 0 running).
// A reconcile still waiting when the manager stops returns quietly: it is not an error.
func (c *CatchUp) Gate(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if err := c.Wait(ctx); err != nil {
			return reconcile.Result{}, nil
		}
		return r.Reconcile(ctx, req)
	})
}

// runnableAfterCatchUp runs a runnable once the cache caught up, keeping its leader election
// need.
type runnableAfterCatchUp struct {
	c        *CatchUp
	start    func(context.Context) error
	onLeader bool
}

// AfterCatchUp returns a manager runnable that calls start once the cache caught up. With
// needLeader, only the leader runs it.
func (c *CatchUp) AfterCatchUp(needLeader bool, start func(context.Context) error) interface {
	Start(context.Context) error
	NeedLeaderElection() bool
} {
	return runnableAfterCatchUp{c: c, start: start, onLeader: needLeader}
}

// Start implements manager.Runnable.
func (r runnableAfterCatchUp) Start(ctx context.Context) error {
	if err := r.c.Wait(ctx); err != nil {
		return nil // stopped before catching up: nothing to do
	}
	return r.start(ctx)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (r runnableAfterCatchUp) NeedLeaderElection() bool { return r.onLeader }
