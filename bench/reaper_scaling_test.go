package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// TestReaperScaling measures a reaper tick (DuePerTick due) for every size of ReaperSizes
// and prints ns/tick and its ratio to the smallest size, next to the ratio O(k log n)
// allows (log n / log n0). It reports; it never fails on a figure.
func TestReaperScaling(t *testing.T) {
	if !*tableFlag {
		t.Skip("pass -table to measure and print the reaper table")
	}
	var table strings.Builder
	fmt.Fprintln(&table, "| reservations n | nodes | setup | live heap after setup | ns/tick | allocs/tick | B/tick | ns per expired | ratio to n=10k | log n / log 10k |")
	fmt.Fprintln(&table, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var base float64
	for _, n := range ReaperSizes {
		start := time.Now()
		f, err := NewReaperFixture(n, *pauseGCFlag)
		if err != nil {
			t.Fatal(err)
		}
		setup := time.Since(start)
		heap := liveHeap()
		var ns, allocs, bytes []float64
		for round := 0; round < *roundsFlag; round++ {
			res := measure(t, fmt.Sprintf("ReaperTick/n=%d", n), iterations(ReaperTicks), ReaperTick(f))
			ns = append(ns, float64(res.T.Nanoseconds())/float64(res.N))
			allocs = append(allocs, float64(res.MemAllocs)/float64(res.N))
			bytes = append(bytes, float64(res.MemBytes)/float64(res.N))
		}
		tick := Median(ns)
		if base == 0 {
			base = tick
		}
		fmt.Fprintf(&table, "| %s | %s | %.1f s | %.2f GiB | %s | %s | %s | %s | %.2fx | %.2fx |\n",
			num(float64(n)), num(float64(f.Nodes)), setup.Seconds(), float64(heap)/(1<<30),
			num(tick), num(Median(allocs)), num(Median(bytes)), num(tick/DuePerTick), tick/base,
			math.Log(float64(n))/math.Log(float64(ReaperSizes[0])))
	}
	fmt.Printf("\n## Reaper tick: %d due per tick, %d reservations per node\n\n", DuePerTick, ReservationsPerNode)
	fmt.Printf("%s; %d ticks per round, %d rounds (medians).\n\n%s\n", harness.Machine(".."), iterations(ReaperTicks), *roundsFlag, table.String())
}
