// Package reconnect wraps the manager's ListerWatchers so that the informers come back as
// soon as the API server does.
//
// A client-go reflector that cannot reach the API server backs off exponentially (0.8 s
// doubling to 30 s, reset after 2 minutes of calm), and neither client-go's
// SharedIndexInformer nor controller-runtime's cache passes a backoff on to it (the knob,
// cache.ReflectorOptions.Backoff, is the Reflector's only). An API server down for 8 seconds
// leaves the reflectors sleeping for up to 6 seconds more after it is back, and the cache
// stale for as long (measured by the chaos suite: API restarts recovered in 13 to 44 s).
// Wrapped, a List or a Watch that finds the API server unreachable is retried here every
// Interval (at most), so the reflector sees one slow call instead of a string of errors, and
// its own backoff does not grow. Only conditions known by their type or status code are
// waited out: a refused, reset or cut connection (k8s.io/apimachinery/pkg/util/net), which
// costs the API server nothing, and 429 or 503, by which the server says it is up and asks
// for patience, honouring its Retry-After. Anything else (a 404 included) goes back to the
// reflector at once, as does the last error after Patience. Back from unreachable, the next
// call waits until the API server says it is ready (Ready, GET /readyz): a starting
// kube-apiserver answers the paths it has not installed yet (custom resources come last)
// with 503 and Retry-After: 5, which client-go waits out in full inside the call.
package reconnect

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

const (
	// Interval is the longest wait between two attempts.
	Interval = time.Second
	// DefaultPatience is how long an unreachable API server is retried before the error is
	// returned to the reflector.
	DefaultPatience = time.Minute
	// firstWait is the wait after the first failure; it grows by half up to Interval.
	firstWait = 200 * time.Millisecond
)

// ListerWatcher retries the List and Watch of the one it wraps while the API server is
// unreachable or not ready.
type ListerWatcher struct {
	LW toolscache.ListerWatcherWithContext
	// Patience is how long an unreachable API server is retried before the error is
	// returned to the reflector.
	Patience time.Duration
	// Ready, when set, tells whether the API server is ready (see Readyz); after the API
	// server was unreachable, the next List or Watch waits until it returns nil.
	Ready func(ctx context.Context) error
	// Type names what is listed, for the log.
	Type string
	Log  logr.Logger
	// sleep waits d or until ctx is done (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
	// noWatchList is the wrapped ListerWatcher's word that it does not serve client-go's
	// streaming lists (watchlist.DoesClientNotSupportWatchListSemantics), passed on.
	noWatchList bool
}

var _ toolscache.ListerWatcherWithContext = (*ListerWatcher)(nil)

// Wrap returns lw retried with the defaults.
func Wrap(lw toolscache.ListerWatcher, typ string, log logr.Logger) *ListerWatcher {
	return &ListerWatcher{LW: toolscache.ToListerWatcherWithContext(lw),
		Patience: DefaultPatience, Type: typ, Log: log, noWatchList: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher says: a
// reflector then lists and watches instead of streaming the list.
func (p *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return p.noWatchList }

// ListWithContext implements toolscache.ListerWatcherWithContext.
func (p *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, p, "list", func() (runtime.Object, error) { return p.LW.ListWithContext(ctx, opts) })
}

// WatchWithContext implements toolscache.ListerWatcherWithContext.
func (p *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, p, "watch", func() (watch.Interface, error) { return p.LW.WatchWithContext(ctx, opts) })
}

// List implements toolscache.Lister (reflectors use ListWithContext).
func (p *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), opts)
}

// Watch implements toolscache.Watcher (reflectors use WatchWithContext).
func (p *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), opts)
}

// retry calls fn until it succeeds, fails for a reason waiting cannot cure, Patience has
// passed or ctx is done.
func retry[T any](ctx context.Context, p *ListerWatcher, verb string, fn func() (T, error)) (T, error) {
	start := time.Now()
	wait := firstWait
	attempts := 0
	for {
		out, err := fn()
		attempts++
		delay, ok := waitFor(err)
		if !ok || time.Since(start) >= p.Patience {
			if err == nil && attempts > 1 {
				p.Log.V(1).Info("API server reachable again", "type", p.Type, "verb", verb,
					"after", time.Since(start).Round(time.Millisecond).String(), "attempts", attempts)
			}
			return out, err
		}
		if attempts == 1 {
			p.Log.V(1).Info("API server unreachable or not ready; retrying", "type", p.Type, "verb", verb, "error", err.Error())
		}
		for {
			if delay == 0 {
				delay = wait
				// Jitter, so that the informers do not come back in step.
				delay += time.Duration(rand.Int64N(int64(delay)/5 + 1))
				wait = min(wait*3/2, Interval)
			}
			if err := p.wait(ctx, delay); err != nil {
				var zero T
				return zero, err
			}
			delay = 0
			// Back from unreachable, the next call waits for the API server to say it is
			// ready: a starting kube-apiserver answers a path it has not installed yet (custom
			// resources come last) with 503 and Retry-After: 5, which client-go waits out in
			// full inside the call.
			if !unreachable(err) || p.Ready == nil || time.Since(start) >= p.Patience || p.ready(ctx) == nil {
				break
			}
		}
	}
}

// ready asks Ready, bounded by one retry interval: a server that accepts the connection and
// never answers must not hold the call past its patience.
func (p *ListerWatcher) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, Interval)
	defer cancel()
	return p.Ready(ctx)
}

// waitFor reports whether err is worth waiting out, and how long the API server asked for
// (0 when it did not say).
func waitFor(err error) (time.Duration, bool) {
	switch {
	case err == nil:
		return 0, false
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err):
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			return time.Duration(s) * time.Second, true
		}
		return 0, true
	case unreachable(err):
		return 0, true
	}
	return 0, false
}

// unreachable reports whether err says the API server could not be reached: a refused, reset
// or cut connection.
func unreachable(err error) bool {
	return err != nil && (utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, io.ErrUnexpectedEOF))
}

func (p *ListerWatcher) wait(ctx context.Context, d time.Duration) error {
	if p.sleep != nil {
		return p.sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx is done (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
