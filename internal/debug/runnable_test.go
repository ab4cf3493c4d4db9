package debug

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// The debug server is controller-runtime's HTTP-server runnable, which the manager starts
// before its caches: the profiler and the dump answer while the informers fill.
func TestServer_RunnableServesBeforeTheCachesStart(t *testing.T) {
	srv, err := NewServer("127.0.0.1:0", nil, nil, nil, logr.Discard()).Runnable()
	if err != nil {
		t.Fatal(err)
	}
	if srv.OnlyServeWhenLeader {
		t.Fatal("the debug server must serve on every replica")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	resp, err := http.Get("http://" + srv.Listener.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Fatalf("pprof answered %d %q", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopping: %v", err)
	}
}

func TestServer_ABadAddressNamesTheFlag(t *testing.T) {
	_, err := NewServer("no-such-host-xyz:http-nope", nil, nil, nil, logr.Discard()).Runnable()
	if err == nil || !strings.Contains(err.Error(), "--debug-bind-address") {
		t.Fatalf("want an error naming --debug-bind-address, got %v", err)
	}
}
