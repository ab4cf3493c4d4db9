package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/handler"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestWriteDump_WritesTheExtensions: a store registered beyond the built-in ones is written
// under "extensions" as its Dump shows it.
func TestWriteDump_WritesTheExtensions(t *testing.T) {
	h := newExtended(t)
	if err := h.Add(ts.MakeNode("n1", "4", "8Gi")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a1", "a2", "b1"} {
		if err := h.Add(teamPod(p, "n1", p[:1])); err != nil {
			t.Fatal(err)
		}
	}
	var got bytes.Buffer
	if err := h.WriteDump(context.Background(), &got, handler.DumpIndented); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Extensions map[string]map[string]int `json:"extensions"`
	}
	if err := json.Unmarshal(got.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Extensions["teams"]["a"] != 2 || doc.Extensions["teams"]["b"] != 1 {
		t.Errorf("extensions written: %v", doc.Extensions)
	}
}
