package reconnect

import (
	"bytes"
	"io"
	"net/http"

	"k8s.io/client-go/rest"
)

// startingUp is what kube-apiserver answers, with a 503 and "Retry-After: 5", to a request
// that arrives after it started listening but before it installed every path (custom
// resources come last). client-go waits the whole 5 s before it retries, although the
// server is usually ready within one; a restarted API server left the informers of custom
// resources 5 to 8 s behind the others in the chaos suite.
var startingUp = []byte("before all known HTTP paths have been installed")

// startupRetryAfter is the wait asked of client-go instead, for reads only.
const startupRetryAfter = "1"

// maxStatusBody bounds what is read of a 503's body to recognise it (a Status is a few
// hundred bytes).
const maxStatusBody = 4 << 10

// RetrySoonerWhileStarting makes the clients built from cfg retry a read that a starting
// API server refused for not having installed its paths yet after 1 s instead of the 5 s it
// asks: the refusal is cheap for it, and the informers of custom resources come back with
// the others. Any other answer, and any write, is left as it is.
func RetrySoonerWhileStarting(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return startupRoundTripper{rt} })
}

type startupRoundTripper struct{ rt http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (s startupRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		return resp, err
	}
	head, readErr := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	// What was read goes back in front of the rest, whatever it held.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if readErr == nil && bytes.Contains(head, startingUp) {
		resp.Header.Set("Retry-After", startupRetryAfter)
	}
	return resp, nil
}

// WrappedRoundTripper lets client-go see through the wrapper (for its debugging wrappers).
func (s startupRoundTripper) WrappedRoundTripper() http.RoundTripper { return s.rt }
