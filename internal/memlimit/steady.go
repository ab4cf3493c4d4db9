package memlimit

import (
	"os"
	"runtime/debug"
)

// DefaultSteadyGCPercent is the collector's GC percent once the cache caught up. A cold start
// runs at GOGC (100 unless set), so that filling 150,000 pods spends little on collection;
// then the heap, nearly all of it the cache, grows slowly, and twice the live heap is more
// headroom than the events and the verify loop need. At 50 the heap peaks at 1.5x the live
// heap instead of 2x, for collections twice as often (measured in BENCHMARKS.md).
const DefaultSteadyGCPercent = 50

// Steady switches the collector to percent and returns the memory the cold start's headroom
// left to the operating system (one forced collection, at catch-up). It does nothing and
// returns false when percent is not positive or GOGC is set: the user's setting wins.
func Steady(percent int) bool {
	if percent <= 0 || os.Getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(percent)
	debug.FreeOSMemory()
	return true
}
