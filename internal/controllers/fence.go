package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Fence tells whether this replica may write to the API, and until when: nil and the moment
// its lease's renew deadline passes, counted from when its last successful renewal was sent,
// or an error when the lease is not known to be held. Past that moment another replica may
// lead (it waits the longer lease duration from when it saw that renewal).
type Fence func() (until time.Time, err error)

// NewWriter returns the client the status writers, the GC and the siblings write with: reads
// come from the manager's cache, and every request that would change something passes fence
// first and is bounded by its deadline (see fenceTransport). A nil fence (no leader
// election) returns the manager's client.
func NewWriter(mgr manager.Manager, fence Fence) (client.Client, error) {
	if fence == nil {
		return mgr.GetClient(), nil
	}
	cfg := fencedConfig(mgr.GetConfig(), fence)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the status writers' client: %w", err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	if err != nil {
		return nil, fmt.Errorf("the status writers' client: %w", err)
	}
	return c, nil
}

// fencedConfig returns a copy of cfg whose transport asks fence before it sends any request
// that is not a read, and bounds it by fence's deadline (see fenceTransport).
func fencedConfig(cfg *rest.Config, fence Fence) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return fenceTransport{next: rt, fence: fence} })
	return cfg
}

// errPastRenewDeadline ends a write attempt still unanswered when the lease's renew deadline
// passes.
var errPastRenewDeadline = errors.New("not writing: the write was still in flight at this replica's lease renew deadline")

// fenceTransport refuses, with the error fence returns, every request but a read: the request
// is not sent. A leader paused (SIGSTOP, a long GC pause, a frozen VM) or cut off past its
// lease may resume with reconciles in flight, and must not write from its stale view once
// another replica may lead. It sits below client-go's REST client, so a write that client-go
// resends on its own (an answer 429 or 5xx with Retry-After, up to 10 times, each after the
// rate limiter's wait) is asked again at each attempt.
//
// A request let through may still stall after the check: dialling, TLS, HTTP/2 stream
// limits, a pause of this process, the API server's priority-and-fairness queue. So each
// attempt carries fence's deadline twice: its context ends there (the request is not sent
// past it, HTTP/2's own resends below this transport included, and one in flight is
// cancelled, which the API server sees as the stream or connection closing), and its URL
// carries ?timeout= the time left, which the API server enforces from when it receives the
// request when it cannot hear the cancellation (a partition). The lease duration's margin
// over the renew deadline covers the request's flight.
type fenceTransport struct {
	next  http.RoundTripper
	fence Fence
}

// RoundTrip implements http.RoundTripper.
func (t fenceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(req)
	}
	until, err := t.fence()
	left := time.Until(until).Truncate(time.Millisecond)
	if err == nil && left <= 0 {
		err = errPastRenewDeadline
	}
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	ctx, cancel := context.WithDeadlineCause(req.Context(), until, errPastRenewDeadline)
	bounded := req.Clone(ctx)
	q := bounded.URL.Query()
	if asked, err := time.ParseDuration(q.Get("timeout")); err != nil || asked <= 0 || asked > left {
		q.Set("timeout", left.String())
		bounded.URL.RawQuery = q.Encode()
	}
	resp, err := t.next.RoundTrip(bounded)
	if err != nil {
		cancel()
		if context.Cause(ctx) == errPastRenewDeadline {
			return nil, fmt.Errorf("%w: %w", errPastRenewDeadline, err)
		}
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// WrappedRoundTripper lets client-go see through the wrapper (for its debugging wrappers).
func (t fenceTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// cancelOnClose releases a bounded attempt's context once its answer is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
