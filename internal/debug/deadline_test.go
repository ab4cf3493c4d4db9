package debug

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// smallBuffers accepts connections whose kernel send buffer is small, so that a client that
// stops reading blocks the server's writes after a few kilobytes, not megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// cacheOf returns a handler holding nodes nodes and pods pods.
func cacheOf(t *testing.T, nodes, pods int) *handler.Handler {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for i := range nodes {
		if err := h.Add(ts.MakeNode(fmt.Sprintf("n-%03d", i), "8", "32Gi")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pods {
		if err := h.Add(ts.MakePod("ns", fmt.Sprintf("p-%04d", i), ts.OnNode(fmt.Sprintf("n-%03d", i%nodes)), ts.Requests("10m", "16Mi"))); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestServer_AClientThatStopsReadingLosesItsTurn: a client reads the start of a dump, then
// stops reading without closing its connection. Once a write has waited DumpWriteTimeout
// for it, the dump ends, says so in the log (with the client and the timeout), and the next
// client is served a whole dump instead of 429.
func TestServer_AClientThatStopsReadingLosesItsTurn(t *testing.T) {
	ended := make(chan map[string]any, 1)
	log := funcr.NewJSON(func(obj string) {
		var line map[string]any
		if json.Unmarshal([]byte(obj), &line) == nil && strings.Contains(fmt.Sprint(line["msg"]), "read nothing for the write timeout") {
			select {
			case ended <- line:
			default:
			}
		}
	}, funcr.Options{})
	s := NewServer("", cacheOf(t, 150, 5000), nil, nil, log)
	s.DumpWriteTimeout = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()

	// The stalled client: a receive buffer as small as the server's send buffer.
	stalled := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}}
	resp, err := stalled.Get(srv.URL + "/debug/cache")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the first client: status %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	// ...and reads no more.

	select {
	case line := <-ended:
		if line["writeTimeout"] != "300ms" || line["client"] == nil {
			t.Errorf("the log line %v does not give the write timeout and the client", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("the dump of a client that stopped reading did not end: every other client is answered 429")
	}

	code, _, doc := getJSON(t, srv.URL+"/debug/cache")
	if code != http.StatusOK || doc["nodes"] == nil || doc["pods"] == nil {
		t.Fatalf("the next client: status %d, want 200 and a whole dump", code)
	}
}
