package bench

import (
	"flag"
	"fmt"
	"testing"
)

var (
	tableFlag = flag.Bool("table", false,
		"run TestSideBySide and TestReaperScaling: measure every operation and variant with testing.Benchmark and print the tables")
	roundsFlag = flag.Int("table.rounds", 5, "rounds of every measurement in the tables (medians are reported)")
	scaleFlag  = flag.Float64("table.scale", 1,
		"scale of the tables' iteration counts (below 1: a quick run, noisier, and the per-event ops visit only the first slots)")
	pauseGCFlag = flag.Bool("pausegc", true,
		"keep garbage collection out of timed sections (see GCControl); false lets the collector run as usual")
)

// iterations scales a table iteration count by -table.scale, to at least 1.
func iterations(n int) int { return max(1, int(float64(n)**scaleFlag)) }

// benchmarkN runs a benchmark body with testing.Benchmark for exactly n iterations (after
// the single warm-up iteration testing.Benchmark always runs first).
func benchmarkN(t *testing.T, n int, body func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	benchtime := flag.Lookup("test.benchtime")
	old := benchtime.Value.String()
	if err := benchtime.Value.Set(fmt.Sprintf("%dx", n)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = benchtime.Value.Set(old) }()
	return testing.Benchmark(body)
}
