package reconnect

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

type cannedRT struct {
	code       int
	retryAfter string
	body       string
}

func (c cannedRT) RoundTrip(*http.Request) (*http.Response, error) {
	h := http.Header{}
	if c.retryAfter != "" {
		h.Set("Retry-After", c.retryAfter)
	}
	return &http.Response{StatusCode: c.code, Header: h, Body: io.NopCloser(strings.NewReader(c.body))}, nil
}

const notInstalled = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request has been made before all known HTTP paths have been installed, please try again","reason":"ServiceUnavailable","details":{"retryAfterSeconds":5},"code":503}`

func TestRetrySoonerWhileStarting(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		rt           cannedRT
		want         string
	}{
		{"a read refused while the paths are installed", http.MethodGet, cannedRT{503, "5", notInstalled}, "1"},
		{"a write refused so", http.MethodPost, cannedRT{503, "5", notInstalled}, "5"},
		{"another 503", http.MethodGet, cannedRT{503, "7", `{"message":"etcd is overloaded"}`}, "7"},
		{"a 429", http.MethodGet, cannedRT{429, "3", notInstalled}, "3"},
		{"a 503 without Retry-After", http.MethodGet, cannedRT{503, "", notInstalled}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &rest.Config{}
			RetrySoonerWhileStarting(cfg)
			rt := cfg.WrapTransport(tc.rt)
			req, _ := http.NewRequest(tc.method, "https://api/apis/x/v1/things", nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After %q, want %q", got, tc.want)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil || string(body) != tc.rt.body {
				t.Errorf("body %q (%v), want it whole: %q", body, err, tc.rt.body)
			}
			if err := resp.Body.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestRetrySoonerWhileStarting_ALongBodyIsLeftWhole(t *testing.T) {
	long := notInstalled + strings.Repeat(" ", 2*maxStatusBody)
	cfg := &rest.Config{}
	RetrySoonerWhileStarting(cfg)
	req, _ := http.NewRequest(http.MethodGet, "https://api/api/v1/pods", nil)
	resp, err := cfg.WrapTransport(cannedRT{503, "5", long}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != long {
		t.Fatalf("read back %d bytes of %d", len(body), len(long))
	}
}
