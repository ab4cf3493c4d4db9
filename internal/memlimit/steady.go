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

// Steady switches the collector to percent. It does nothing and returns false when percent
// is not positive or GOGC is set: the user's setting wins. The memory the cold start's
// headroom leaves is returned to the operating system by the runtime's background
// scavenger, gradually: debug.FreeOSMemory would return it at once, but holds the heap lock
// while it does (seconds for a GiB here), stalling every allocation of the process.
func Steady(percent int) bool {
	if percent <= 0 || os.Getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(percent)
	return true
}
