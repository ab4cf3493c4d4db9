package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// busyServer answers /debug/cache 429 with retryAfter (the debug server's answer while it
// writes another client's dump) busy times, then 200 with body.
func busyServer(t *testing.T, busy int, retryAfter, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(asked.Add(1)) <= busy {
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error": "a dump of the cache is being written to another client; one is written at a time: retry in 3 seconds"}`))
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

// recordSleeps replaces sleep by one that records what it was asked to wait, and fails
// with fail from the call number failAt on (0: never).
func recordSleeps(t *testing.T, failAt int, fail error) *[]time.Duration {
	t.Helper()
	var waits []time.Duration
	old := sleep
	sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		if failAt > 0 && len(waits) >= failAt {
			return fail
		}
		return nil
	}
	t.Cleanup(func() { sleep = old })
	return &waits
}

// TestRun_ABusyDumpIsAskedAgainAfterItsRetryAfter: two 429s, then the dump: the plugin
// waits each Retry-After, says on stderr that it waits for another dump, and prints the
// dump.
func TestRun_ABusyDumpIsAskedAgainAfterItsRetryAfter(t *testing.T) {
	srv, asked := busyServer(t, 2, "3", `{"nodes": {}}`)
	waits := recordSleeps(t, 0, nil)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"dump", "--debug-url=" + srv.URL}, &out, &errOut); code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, errOut.String())
	}
	if out.String() != `{"nodes": {}}` || asked.Load() != 3 {
		t.Errorf("stdout %q after %d requests, want the dump after 3", out.String(), asked.Load())
	}
	if len(*waits) != 2 || (*waits)[0] != 3*time.Second || (*waits)[1] != 3*time.Second {
		t.Errorf("waited %v, want the Retry-After (3s) twice", *waits)
	}
	if strings.Count(errOut.String(), "waiting 3s for it to finish") != 2 || !strings.Contains(errOut.String(), "writing a dump to another client") {
		t.Errorf("stderr %q does not say twice that it waits for another dump", errOut.String())
	}
}

// TestRun_ADumpStillBusyAfterTheRetriesFailsWithTheServersMessage: a server that stays busy
// is asked busyRetries+1 times, each wait bounded by maxRetryAfter (a Retry-After of an hour
// waits 30 s), and the plugin fails with exit code 1 and the server's message.
func TestRun_ADumpStillBusyAfterTheRetriesFailsWithTheServersMessage(t *testing.T) {
	srv, asked := busyServer(t, 1000, "3600", "")
	waits := recordSleeps(t, 0, nil)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"nodes", "--debug-url=" + srv.URL}, &out, &errOut); code != exitFail {
		t.Fatalf("exit code %d, want %d", code, exitFail)
	}
	var total time.Duration
	for _, w := range *waits {
		if w > maxRetryAfter {
			t.Errorf("waited %s at once, more than %s", w, maxRetryAfter)
		}
		total += w
	}
	// Waits of maxRetryAfter until busyWait is spent, or busyRetries of them, whichever first.
	wantAsked := min(busyRetries, int((busyWait+maxRetryAfter-1)/maxRetryAfter)) + 1
	if int(asked.Load()) != wantAsked || total != min(busyWait, time.Duration(busyRetries)*maxRetryAfter) {
		t.Errorf("asked %d times and waited %s in all, want %d times and %s", asked.Load(), total, wantAsked, min(busyWait, time.Duration(busyRetries)*maxRetryAfter))
	}
	if msg := errOut.String(); !strings.Contains(msg, "429 Too Many Requests") || !strings.Contains(msg, "one is written at a time") || !strings.Contains(msg, "try again later") {
		t.Errorf("stderr %q does not carry the server's 429 and say to try again later", msg)
	}
}

// TestRun_ACancelledWaitForABusyDumpEndsTheCommand: the wait honours the context.
func TestRun_ACancelledWaitForABusyDumpEndsTheCommand(t *testing.T) {
	srv, asked := busyServer(t, 1000, "2", "")
	recordSleeps(t, 1, context.Canceled)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"dump", "--debug-url=" + srv.URL}, &out, &errOut); code != exitFail {
		t.Fatalf("exit code %d, want %d", code, exitFail)
	}
	if asked.Load() != 1 || !strings.Contains(errOut.String(), "waiting for another client's request to finish: context canceled") {
		t.Errorf("asked %d times, stderr %q; want one request and the cancelled wait named", asked.Load(), errOut.String())
	}
}

// TestSleep_ReturnsTheContextsError: the real wait ends with its context.
func TestSleep_ReturnsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep with a cancelled context: %v", err)
	}
}
