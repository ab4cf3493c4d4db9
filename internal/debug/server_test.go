package debug

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestServer_DumpStreamsWriteDumpInTheLayoutAsked: GET /debug/cache answers the document
// Handler.WriteDump writes: compact for a program (the kubectl plugin, Go's client),
// indented by two spaces for ?pretty=true and, as the API server does, for curl, wget and
// browsers unless ?pretty=false; a pretty= that is no boolean is a 400 that says what to
// write.
func TestServer_DumpStreamsWriteDumpInTheLayoutAsked(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for i := range 150 {
		if err := h.Add(ts.MakeNode(fmt.Sprintf("n-%03d", i), "8", "32Gi")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5000 {
		if err := h.Add(ts.MakePod("ns", fmt.Sprintf("p-%04d", i), ts.OnNode(fmt.Sprintf("n-%03d", i%150)), ts.Requests("10m", "16Mi"))); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(NewServer("", h, nil, nil, logr.Discard()).Handler())
	defer srv.Close()
	encode := func(layout handler.DumpLayout) []byte {
		var b bytes.Buffer
		if err := h.WriteDump(context.Background(), &b, layout); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	compact, indented := encode(handler.DumpCompact), encode(handler.DumpIndented)
	for _, c := range []struct {
		query, userAgent string
		want             []byte
	}{
		{"", "", compact},
		{"", "kubectl-multicache/v1", compact},
		{"?pretty=true", "", indented},
		{"?pretty=1", "Go-http-client/1.1", indented},
		{"", "curl/8.5.0", indented},
		{"", "Mozilla/5.0", indented},
		{"?pretty=false", "curl/8.5.0", compact},
		{"?pretty", "curl/8.5.0", indented}, // empty: as if absent
		{"?pretty=", "", compact},
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/debug/cache"+c.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", c.userAgent)
		status, ctype, body := do(t, req)
		if status != http.StatusOK || ctype != "application/json" {
			t.Fatalf("GET %s (User-Agent %q): status %d, Content-Type %q", c.query, c.userAgent, status, ctype)
		}
		if !bytes.Equal(body, c.want) {
			t.Errorf("GET %s (User-Agent %q): %d bytes, not Dump's document laid out as wanted (%d bytes)", c.query, c.userAgent, len(body), len(c.want))
		}
	}
	if len(compact) >= len(indented) {
		t.Errorf("compact %d bytes, indented %d", len(compact), len(indented))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/debug/cache?pretty=yes-please", nil)
	status, _, body := do(t, req)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "pretty=true") {
		t.Errorf("GET ?pretty=yes-please: %d %s, want 400 saying what to write", status, body)
	}
}

// do sends req and returns the status, the Content-Type and the body.
func do(t *testing.T, req *http.Request) (int, string, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// TestServer_OneDumpAtATime: while a dump is written, another GET /debug/cache is answered
// 429 with an error that says to retry; once it ends, dumps are served again, one after the
// other.
func TestServer_OneDumpAtATime(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	if err := h.Add(ts.MakeNode("n-0", "8", "32Gi")); err != nil {
		t.Fatal(err)
	}
	s := NewServer("", h, nil, nil, logr.Discard())
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var retryAfter string
	get := func() (int, map[string]any) {
		t.Helper()
		code, header, body := getJSON(t, srv.URL+"/debug/cache")
		retryAfter = header.Get("Retry-After")
		return code, body
	}

	s.dumps.busy.Store(true) // a dump under way, for 2.5 s now; the last one took 10 s
	s.dumps.started.Store(time.Now().Add(-2500 * time.Millisecond).UnixNano())
	s.dumps.lastTook.Store(int64(10 * time.Second))
	code, body := get()
	if code != http.StatusTooManyRequests {
		t.Fatalf("a second dump while one is written: status %d, want 429", code)
	}
	if retryAfter != "8" {
		t.Errorf("the 429's Retry-After is %q, want 8 (seconds: what the last dump took less what this one has run, rounded up)", retryAfter)
	}
	if msg, _ := body["error"].(string); !strings.Contains(msg, "one is written at a time") || !strings.Contains(msg, "retry in 8 seconds") {
		t.Errorf("the 429's error %q does not say that one dump is written at a time and to retry in 8 seconds", msg)
	}

	s.dumps.busy.Store(false) // it ended
	for i := range 2 {
		if code, body := get(); code != http.StatusOK || body["nodes"] == nil {
			t.Errorf("dump %d after the other ended: status %d, nodes %v", i+1, code, body["nodes"])
		}
	}
}

// TestServer_RetryAfterIsWhatTheDumpUnderWayLikelyHasLeft: the 429's Retry-After, within
// [1, 60] seconds.
func TestServer_RetryAfterIsWhatTheDumpUnderWayLikelyHasLeft(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		ran, last time.Duration
		want      int
	}{
		{ran: 2 * time.Second, want: 2},        // no last dump: as long again
		{ran: 300 * time.Millisecond, want: 1}, // at least a second
		{ran: time.Second, last: 3500 * time.Millisecond, want: 3},
		{ran: 5 * time.Second, last: 3 * time.Second, want: 3},   // overdue: half as long again
		{ran: 20 * time.Second, last: 1 * time.Second, want: 10}, // the last one was cut short
		{ran: 10 * time.Minute, want: 60},                        // at most a minute
		{want: 1},                                                // the dump under way has not recorded its start
	} {
		var tu turn
		if tc.ran > 0 {
			tu.started.Store(now.Add(-tc.ran).UnixNano())
		}
		tu.lastTook.Store(int64(tc.last))
		if got := tu.retryAfter(now); got != tc.want {
			t.Errorf("ran %s, last %s: Retry-After %d, want %d", tc.ran, tc.last, got, tc.want)
		}
	}
}

// getJSON GETs url and decodes its body, a JSON object; it fails the test when the request
// fails or the body is no JSON.
func getJSON(t *testing.T, url string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: status %d, the body is not a JSON object: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, resp.Header, body
}
