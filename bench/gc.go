package bench

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// gcBudget is how many bytes may be allocated, with the collector paused, before GCControl
// runs a collection between two timed sections.
const gcBudget = 256 << 20

// GCControl keeps garbage collection out of timed sections when Paused: the collector is
// off for the benchmark run, and Between runs a full collection, untimed, once gcBudget
// bytes were allocated since the last one. A timed op then pays for its allocations
// (malloc) but not for collecting its garbage nor anyone else's: untimed work (re-adding a
// slot, changing 50 nodes, recycling reservations) can no longer set off a collection that
// runs concurrently with the next timed op, which would charge the op for garbage it did
// not make. B/op and allocs/op still show the garbage each op leaves. When not Paused, the
// collector runs as usual, timed or not.
type GCControl struct {
	// Paused selects the paused mode.
	Paused bool
	// mark is the allocated bytes counter at the last collection.
	mark uint64
}

// Start begins a benchmark run: in the paused mode the collector is turned off until the
// run ends. testing runs a full collection before every run, so none is needed here.
func (g *GCControl) Start(b *testing.B) {
	if !g.Paused {
		return
	}
	old := debug.SetGCPercent(-1)
	b.Cleanup(func() { debug.SetGCPercent(old) })
	g.mark = allocatedBytes()
}

// Between runs a full collection if the budget is spent. Call it with the timer stopped.
func (g *GCControl) Between() {
	if g.Paused && allocatedBytes()-g.mark > gcBudget {
		runtime.GC()
		g.mark = allocatedBytes()
	}
}

// allocatedBytes returns the bytes allocated on the heap since the process started,
// without stopping the world.
func allocatedBytes() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
