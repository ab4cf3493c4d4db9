package handler

import (
	"fmt"
	"testing"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkCheckInvariants_LockHeld measures, at 5,000 nodes and 150,000 pods, how long the
// verify loop's invariant check holds the handler's read lock (events wait that long) and how
// long the whole check takes. Run:
// go test -run '^$' -bench BenchmarkCheckInvariants_LockHeld -benchtime 5x ./internal/handler
func BenchmarkCheckInvariants_LockHeld(b *testing.B) {
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
			_ = h.checkLocked()
			h.mu.RUnlock()
		}
	})
	b.Run("whole-check", func(b *testing.B) {
		for b.Loop() {
			if errs := h.CheckInvariants(); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
}
