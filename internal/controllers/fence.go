package controllers

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// writer returns the client the status writers and the GC write with: reads come from the
// manager's cache, and every request that would change something passes fence first (see
// fenceTransport). A nil fence (no leader election) returns the manager's client.
func writer(mgr manager.Manager, fence func() error) (client.Client, error) {
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
// that is not a read (see fenceTransport).
func fencedConfig(cfg *rest.Config, fence func() error) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return fenceTransport{next: rt, fence: fence} })
	return cfg
}

// fenceTransport refuses, with the error fence returns, every request but a read: the request
// is not sent. A leader paused (SIGSTOP, a long GC pause, a frozen VM) or cut off past its
// lease may resume with reconciles in flight, and must not write from its stale view once
// another replica may lead. It sits below client-go's REST client, so a write that client-go
// resends on its own (an answer 429 or 5xx with Retry-After, up to 10 times) is asked again
// at each attempt.
type fenceTransport struct {
	next  http.RoundTripper
	fence func() error
}

// RoundTrip implements http.RoundTripper.
func (t fenceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := t.fence(); err != nil {
			if req.Body != nil {
				_ = req.Body.Close() // a RoundTripper closes the body, even on error
			}
			return nil, err
		}
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go see through the wrapper (for its debugging wrappers).
func (t fenceTransport) WrappedRoundTripper() http.RoundTripper { return t.next }
