package handler

import (
	"fmt"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkDump_LockHeld compares, at 5,000 nodes and 150,000 pods, how long a dump holds
// the handler's read lock (the stores copying what their views need) with how long the whole
// dump takes and with rendering every view under the lock (what Dump did before the large
// views were deferred). Run: go test -run '^$' -bench BenchmarkDump_LockHeld ./internal/handler
func BenchmarkDump_LockHeld(b *testing.B) {
	h, _ := newQuietHandler(b)
	const nodes, pods = 5000, 150000
	for i := range nodes {
		must(b, h.AddNode(ts.MakeNode(fmt.Sprintf("n-%05d", i), "64", "256Gi")))
	}
	for i := range pods {
		must(b, h.AddPod(ts.MakePod("ns", fmt.Sprintf("p-%06d", i), ts.OnNode(fmt.Sprintf("n-%05d", i%nodes)), ts.Requests("100m", "128Mi"))))
	}
	b.Run("locked-part", func(b *testing.B) {
		for b.Loop() {
			h.mu.RLock()
			for _, s := range h.stores {
				if d, ok := s.(stores.DeferredDumper); ok {
					_ = d.DumpDeferred()
				} else {
					_ = s.Dump()
				}
			}
			h.mu.RUnlock()
		}
	})
	b.Run("whole-dump", func(b *testing.B) {
		for b.Loop() {
			_ = h.Dump()
		}
	})
	b.Run("everything-under-the-lock", func(b *testing.B) {
		for b.Loop() {
			h.mu.RLock()
			for _, s := range h.stores {
				_ = s.Dump()
			}
			h.mu.RUnlock()
		}
	})
}
