package handler

import (
	"context"
	"io"
	"slices"
	"testing"
)

// BenchmarkWriteDump_EventWait measures, at 5,000 nodes and 150,000 pods, what a streamed
// dump (/debug/cache) costs the events applied meanwhile: how long pod label updates, 1 ms
// apart, took while dumps ran back to back (the wait for the lock, mostly), and how long one
// dump takes. Run: go test -run '^$' -bench BenchmarkWriteDump_EventWait -benchtime 5x ./internal/handler
func BenchmarkWriteDump_EventWait(b *testing.B) {
	h := largeCache(b)
	for _, layout := range []struct {
		name string
		l    DumpLayout
	}{{"compact", DumpCompact}, {"indented", DumpIndented}} {
		b.Run(layout.name, func(b *testing.B) {
			waits := eventWaitsDuring(b, h, func() {
				for b.Loop() {
					if err := h.WriteDump(context.Background(), io.Discard, layout.l); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(slices.Max(waits).Microseconds()), "event-wait-max-us")
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "event-wait-p99-us")
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "event-wait-p50-us")
			b.ReportMetric(float64(len(waits)), "events")
		})
	}
}
