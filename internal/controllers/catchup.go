package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/metrics"
)

// CatchUp knows whether the cache has caught up with the cluster: every feed has applied
// (reconciled once, successfully) every object its informer held when it synced. An informer
// that synced only holds the initial list; the feed's queue may still hold all of it, so
// "synced" is not "caught up" (at 30,000 pods the difference is seconds).
//
// Everything that acts on the cache's view waits for Done: /readyz, the status writers,
// the reaper, the reservation GC, the verify loop and the sibling controllers. Standbys run
// the feeds too, so a standby that takes over is caught up already.
//
// Keys a feed reconciles before its informer's initial keys are known are remembered, so
// the order in which the feeds and the tracker start does not matter.
type CatchUp struct {
	informers cache.Informers
	log       logr.Logger
	clock     clock.PassiveClock

	mu    sync.Mutex
	feeds map[string]*feedCatchUp
	// order is the feeds in registration order (deterministic logs).
	order []string
	// armed counts the feeds whose initial keys are known.
	armed int

	start    time.Time
	caughtUp atomic.Bool
	done     chan struct{}
	// took and applied are set once caught up.
	took    time.Duration
	applied int
}

// versionReporter is implemented by the feeds: the resource version of the object the
// cache holds under a key (false when it holds none).
type versionReporter interface {
	CachedVersion(key types.NamespacedName) (string, bool)
}

// feedCatchUp is the catch-up state of one feed.
type feedCatchUp struct {
	name string
	obj  client.Object
	// cached, when the feed reports it, tells the sweep what the cache holds.
	cached versionReporter
	// pending are the keys ("namespace/name" or "name") of the informer's initial list not
	// reconciled yet; nil until the informer synced.
	pending map[string]struct{}
	// early are keys reconciled before pending was known.
	early map[string]struct{}
	// initial is the size of the informer's initial list.
	initial int
}

// NewCatchUp returns a tracker of feeds whose informers come from informers (the manager's
// cache); Track adds the feeds before the manager starts.
func NewCatchUp(informers cache.Informers, log logr.Logger, clk clock.PassiveClock) *CatchUp {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &CatchUp{informers: informers, log: log, clock: clk, feeds: map[string]*feedCatchUp{}, done: make(chan struct{}), start: clk.Now()}
}

// Track registers the feed name, whose informer holds objects like obj, and returns its
// reconciler wrapped so that every successful reconcile counts.
func (c *CatchUp) Track(name string, obj client.Object, r reconcile.Reconciler) reconcile.Reconciler {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &feedCatchUp{name: name, obj: obj, early: map[string]struct{}{}}
	f.cached, _ = r.(versionReporter)
	c.feeds[name] = f
	c.order = append(c.order, name)
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err == nil && !c.caughtUp.Load() {
			c.reconciled(name, req)
		}
		return res, err
	})
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
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, name := range c.order {
		f := c.feeds[name]
		if f.pending == nil {
			parts = append(parts, name+": informer not synced")
		} else if len(f.pending) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d of %d initial objects not applied", name, len(f.pending), f.initial))
		}
	}
	return strings.Join(parts, "; ")
}

func (c *CatchUp) reconciled(name string, req reconcile.Request) {
	key := requestKey(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.feeds[name]
	if f.pending == nil {
		f.early[key] = struct{}{}
		return
	}
	if _, ok := f.pending[key]; !ok {
		return
	}
	delete(f.pending, key)
	if len(f.pending) == 0 {
		c.checkLocked()
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica catches up.
func (c *CatchUp) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable (every replica): it waits for each feed's informer to
// sync, takes its initial keys, and logs progress until the cache caught up.
func (c *CatchUp) Start(ctx context.Context) error {
	c.mu.Lock()
	c.start = c.clock.Now()
	names := append([]string(nil), c.order...)
	c.mu.Unlock()
	for _, name := range names {
		c.mu.Lock()
		obj := c.feeds[name].obj
		c.mu.Unlock()
		inf, err := c.informers.GetInformer(ctx, obj)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("catch-up of %s: getting the informer: %w", name, err)
		}
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return nil
		}
		keys, err := initialKeys(inf)
		if err != nil {
			return fmt.Errorf("catch-up of %s: %w", name, err)
		}
		c.arm(name, keys)
	}
	logTicker := time.NewTicker(10 * time.Second)
	defer logTicker.Stop()
	sweepTicker := time.NewTicker(sweepPeriod)
	defer sweepTicker.Stop()
	for {
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return nil
		case <-sweepTicker.C:
			c.sweep(ctx)
		case <-logTicker.C:
			c.log.Info("waiting for the cache to catch up", "missing", c.Status(), "elapsed", c.clock.Since(c.start).Round(time.Millisecond).String())
		}
	}
}

// sweepPeriod is how often the pending keys are checked against the cache itself.
const sweepPeriod = 2 * time.Second

// sweep counts as applied every pending key whose object the cache already holds at the
// informer's version (or that neither holds): its reconcile may have been counted before
// the key was known as initial under another incarnation, or been merged away in the queue
// across a relist, and the cache must not stay unready for a key it has right.
func (c *CatchUp) sweep(ctx context.Context) {
	type pendingFeed struct {
		f    *feedCatchUp
		keys []string
	}
	var todo []pendingFeed
	c.mu.Lock()
	for _, name := range c.order {
		f := c.feeds[name]
		if f.cached == nil || len(f.pending) == 0 {
			continue
		}
		keys := make([]string, 0, len(f.pending))
		for k := range f.pending {
			keys = append(keys, k)
		}
		todo = append(todo, pendingFeed{f, keys})
	}
	c.mu.Unlock()
	for _, p := range todo {
		inf, err := c.informers.GetInformer(ctx, p.f.obj)
		if err != nil {
			continue
		}
		withStore, ok := inf.(interface{ GetStore() toolscache.Store })
		if !ok {
			continue
		}
		store := withStore.GetStore()
		var settled []string
		for _, k := range p.keys {
			item, exists, err := store.GetByKey(k)
			if err != nil {
				continue
			}
			rv, cached := p.f.cached.CachedVersion(keyOf(k))
			obj, isObj := item.(client.Object)
			if (!exists && !cached) || (exists && cached && isObj && obj.GetResourceVersion() == rv) {
				settled = append(settled, k)
			}
		}
		if len(settled) == 0 {
			continue
		}
		c.mu.Lock()
		for _, k := range settled {
			delete(p.f.pending, k)
		}
		c.log.Info("initial objects found applied without a counted reconcile", "feed", p.f.name, "count", len(settled), "example", settled[0])
		c.checkLocked()
		c.mu.Unlock()
	}
}

// keyOf parses an informer key.
func keyOf(k string) types.NamespacedName {
	if ns, name, ok := strings.Cut(k, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Name: k}
}

// initialKeys lists the keys an informer holds.
func initialKeys(inf cache.Informer) ([]string, error) {
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("informer %T does not expose its store", inf)
	}
	return withStore.GetStore().ListKeys(), nil
}

func (c *CatchUp) arm(name string, keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.feeds[name]
	if f.pending != nil {
		return
	}
	f.initial = len(keys)
	f.pending = make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, ok := f.early[k]; !ok {
			f.pending[k] = struct{}{}
		}
	}
	f.early = nil
	c.armed++
	c.checkLocked()
}

// checkLocked closes done when every feed is armed and has nothing pending.
func (c *CatchUp) checkLocked() {
	if c.caughtUp.Load() || c.armed < len(c.feeds) {
		return
	}
	for _, f := range c.feeds {
		if len(f.pending) > 0 {
			return
		}
	}
	c.took = c.clock.Since(c.start)
	perFeed := make([]any, 0, 2*len(c.feeds))
	names := append([]string(nil), c.order...)
	sort.Strings(names)
	for _, name := range names {
		f := c.feeds[name]
		c.applied += f.initial
		perFeed = append(perFeed, name, f.initial)
		f.pending = map[string]struct{}{}
	}
	metrics.CatchUpSeconds.Set(c.took.Seconds())
	metrics.CatchUpObjects.Set(float64(c.applied))
	metrics.CaughtUp.Set(1)
	c.caughtUp.Store(true)
	close(c.done)
	c.log.Info("cache caught up: every feed applied what its informer held at sync",
		append([]any{"took", c.took.Round(time.Millisecond).String(), "objects", c.applied}, perFeed...)...)
}

// Result returns how long catching up took and how many objects the informers held then;
// zeros until caught up.
func (c *CatchUp) Result() (time.Duration, int) {
	if !c.caughtUp.Load() {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.took, c.applied
}

// requestKey renders a request the way informer stores key objects.
func requestKey(req reconcile.Request) string {
	if req.Namespace == "" {
		return req.Name
	}
	return req.Namespace + "/" + req.Name
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
