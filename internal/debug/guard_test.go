package debug

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seed0f91f25e/multicache/internal/drift"
)

// heldSource is an API source whose lists wait until release is closed; entered is closed
// when the first one starts.
type heldSource struct {
	entered, release chan struct{}
	once             sync.Once
}

func newHeldSource() *heldSource {
	return &heldSource{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldSource) Each(ctx context.Context, _ drift.Listing, _ func(client.Object) error) error {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *heldSource) Get(context.Context, drift.Listing, client.ObjectKey) (client.Object, bool, error) {
	return nil, false, nil
}

// start serves s through its Runnable (the HTTP server with its timeouts) and returns the
// base URL; the server stops with the test.
func start(t *testing.T, s *Server) string {
	t.Helper()
	srv, err := s.Runnable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stopping the debug server: %v", err)
		}
	})
	return "http://" + srv.Listener.Addr().String()
}

// TestServer_ASecondComparisonIsAnswered429WhileOneRuns: while a comparison lists the API,
// another GET /debug/cache/compare is answered at once 429 with a Retry-After and an error
// that says one runs at a time; the first one ends with its answer, and the next is served.
func TestServer_ASecondComparisonIsAnswered429WhileOneRuns(t *testing.T) {
	s := NewServer("127.0.0.1:0", cacheOf(t, 1, 1), nil, nil, logr.Discard())
	src := newHeldSource()
	s.Source = src
	base := start(t, s)
	client := &http.Client{Timeout: 5 * time.Second}

	first := make(chan int, 1)
	go func() {
		resp, err := client.Get(base + "/debug/cache/compare")
		if err != nil {
			first <- 0
			return
		}
		_ = resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-src.entered
	resp, err := client.Get(base + "/debug/cache/compare")
	if err != nil {
		t.Fatalf("a second comparison while one runs: %v (want an immediate 429)", err)
	}
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second comparison while one runs: status %d, Retry-After %q; want 429 with a Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(body["error"], "one runs at a time") || !strings.Contains(body["error"], "retry in") {
		t.Errorf("the 429's error %q does not say that one comparison runs at a time and when to retry", body["error"])
	}
	close(src.release)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("the first comparison: status %d, want 200", code)
	}
	if code, _, _ := getJSONList(t, client, base+"/debug/cache/compare"); code != http.StatusOK {
		t.Errorf("a comparison after the first ended: status %d, want 200", code)
	}
}

func getJSONList(t *testing.T, c *http.Client, url string) (int, http.Header, []any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body []any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}

// TestServer_ProfileSecondsAreBounded: a profile or trace of more than MaxProfileSeconds, or
// of seconds that are no positive number, is a 400 that says what to write, at once.
func TestServer_ProfileSecondsAreBounded(t *testing.T) {
	base := start(t, NewServer("127.0.0.1:0", nil, nil, nil, logr.Discard()))
	client := &http.Client{Timeout: 5 * time.Second}
	for _, c := range []struct{ path, want string }{
		{"/debug/pprof/profile?seconds=61", "more than the debug server's 60"},
		{"/debug/pprof/trace?seconds=3600", "more than the debug server's 60"},
		{"/debug/pprof/profile?seconds=ten", "not a positive number of seconds"},
		{"/debug/pprof/trace?seconds=-1", "not a positive number of seconds"},
	} {
		resp, err := client.Get(base + c.path)
		if err != nil {
			t.Errorf("GET %s: %v (want an immediate 400)", c.path, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %d %s, want 400 saying %q", c.path, resp.StatusCode, b, c.want)
		}
	}
}

// TestServer_ALongProfileOutlivesTheReadAndWriteTimeouts: a profile longer than the read
// and write timeouts runs its seconds and is written whole: net/http lifts the read
// deadline once the request is read, and pprof adds its seconds to the write timeout.
func TestServer_ALongProfileOutlivesTheReadAndWriteTimeouts(t *testing.T) {
	s := NewServer("127.0.0.1:0", nil, nil, nil, logr.Discard())
	s.timeouts.read, s.timeouts.write = 300*time.Millisecond, time.Second
	base := start(t, s)
	begin := time.Now()
	resp, err := http.Get(base + "/debug/pprof/profile?seconds=2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(b) == 0 {
		t.Fatalf("a 2 s profile: status %d, %d bytes, %v", resp.StatusCode, len(b), err)
	}
	if took := time.Since(begin); took < 2*time.Second {
		t.Errorf("a 2 s profile ended after %s: cut short", took)
	}
}

// TestServer_AnIdleConnectionIsClosed: a kept-alive connection that sends no next request
// is closed after the idle timeout.
func TestServer_AnIdleConnectionIsClosed(t *testing.T) {
	s := NewServer("127.0.0.1:0", nil, nil, nil, logr.Discard())
	s.timeouts.idle = 200 * time.Millisecond
	base := start(t, s)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := fmt.Fprintf(conn, "GET /debug/pprof/cmdline HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("an idle connection, 5 s on: read %v, want it closed (EOF) after the 200ms idle timeout", err)
	}
}

// TestServer_AnswersOnlyTheHostsItIsReachedAt: a request whose Host is another name (a web
// page's, through DNS rebinding) is a 403 naming the hosts accepted; localhost, loopback IPs
// and the bind address's host are answered.
func TestServer_AnswersOnlyTheHostsItIsReachedAt(t *testing.T) {
	var ifaceIP string
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				ifaceIP = net.JoinHostPort(n.IP.String(), "8082")
				break
			}
		}
	}
	for _, c := range []struct {
		bind           string
		accept, refuse []string
	}{
		{"127.0.0.1:8082", []string{"127.0.0.1:8082", "localhost:8082", "LocalHost", "[::1]:8082", "127.0.0.2", "localhost."},
			[]string{"attacker.example:8082", "attacker.example", "10.1.2.3:8082", "localhost.attacker.example"}},
		{"10.1.2.3:8082", []string{"10.1.2.3:8082", "localhost:8082"}, []string{"10.1.2.4:8082", "attacker.example"}},
		{"debug.example:8082", []string{"debug.example:8082", "DEBUG.example", "127.0.0.1"}, []string{"attacker.example"}},
		{"[::1]:8082", []string{"[::1]:8082", "localhost"}, []string{"attacker.example"}},
		{"0.0.0.0:8082", []string{ifaceIP, "127.0.0.1:8082"}, []string{"attacker.example", "0.0.0.0:8082"}},
	} {
		srv := httptest.NewServer(NewServer(c.bind, nil, nil, nil, logr.Discard()).Handler())
		get := func(host string) (int, string) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/debug/pprof/cmdline", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			code, _, body := do(t, req)
			return code, string(body)
		}
		for _, host := range c.accept {
			if host == "" {
				continue // no interface but loopback
			}
			if code, body := get(host); code != http.StatusOK {
				t.Errorf("bound to %s, Host %q: %d %s, want 200", c.bind, host, code, body)
			}
		}
		for _, host := range c.refuse {
			code, body := get(host)
			if code != http.StatusForbidden || !strings.Contains(body, "localhost") || !strings.Contains(body, "127.0.0.1") || !strings.Contains(body, "DNS rebinding") {
				t.Errorf("bound to %s, Host %q: %d %s, want 403 naming the hosts accepted", c.bind, host, code, body)
			}
		}
		srv.Close()
	}
}

// TestServer_ANonLoopbackBindIsWarnedOf: bound beyond the loopback interface, the server
// logs a warning naming the flag and the address; on 127.0.0.1, it does not.
func TestServer_ANonLoopbackBindIsWarnedOf(t *testing.T) {
	for _, c := range []struct {
		addr string
		warn bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}, {"localhost:0", false}} {
		var warnings []map[string]any
		log := funcr.NewJSON(func(obj string) {
			var line map[string]any
			if json.Unmarshal([]byte(obj), &line) == nil && strings.HasPrefix(fmt.Sprint(line["msg"]), "warning:") {
				warnings = append(warnings, line)
			}
		}, funcr.Options{})
		srv, err := NewServer(c.addr, nil, nil, nil, log).Runnable()
		if err != nil {
			t.Fatal(err)
		}
		closeListener(t, srv)
		switch {
		case !c.warn && len(warnings) > 0:
			t.Errorf("bound to %s: warned %v", c.addr, warnings)
		case c.warn && len(warnings) != 1:
			t.Errorf("bound to %s: %d warnings, want 1", c.addr, len(warnings))
		case c.warn:
			w := warnings[0]
			if w["flag"] != "--debug-bind-address" || !strings.Contains(fmt.Sprint(w["address"]), ":") || !strings.Contains(fmt.Sprint(w["msg"]), "port-forward") {
				t.Errorf("bound to %s: the warning %v does not name the flag, the address and what to do", c.addr, w)
			}
		}
	}
}

func closeListener(t *testing.T, srv *manager.Server) {
	t.Helper()
	if err := srv.Listener.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestServer_RunnableHasTimeouts: every timeout of the HTTP server is set.
func TestServer_RunnableHasTimeouts(t *testing.T) {
	srv, err := NewServer("127.0.0.1:0", nil, nil, nil, logr.Discard()).Runnable()
	if err != nil {
		t.Fatal(err)
	}
	closeListener(t, srv)
	hs := srv.Server
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 {
		t.Errorf("timeouts: read header %s, read %s, write %s, idle %s; want each set",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout)
	}
}
