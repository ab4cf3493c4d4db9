package debug

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestServer_DumpStreamsTheDocumentDumpBuilds: GET /debug/cache answers JSON that is the
// document Handler.Dump builds, encoded as the server encoded it before it streamed (what
// the kubectl plugin reads).
func TestServer_DumpStreamsTheDocumentDumpBuilds(t *testing.T) {
	config, err := stores.NewCacheHandlerBuilder().Build()
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for i := range 150 {
		if err := h.AddNode(ts.MakeNode(fmt.Sprintf("n-%03d", i), "8", "32Gi")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5000 {
		if err := h.AddPod(ts.MakePod("ns", fmt.Sprintf("p-%04d", i), ts.OnNode(fmt.Sprintf("n-%03d", i%150)), ts.Requests("10m", "16Mi"))); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(NewServer("", h, nil, nil, logr.Discard()).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/cache")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(h.Dump()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Bytes()) {
		t.Errorf("GET /debug/cache (%d bytes) is not Dump's document (%d bytes)", len(body), want.Len())
	}
}
