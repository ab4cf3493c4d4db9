package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// TestSideBySide measures every operation on every variant in this one process, round
// after round (variants interleaved), and prints the multicache/kube ratios with their
// targets. It reports; it never fails on a figure (only when a benchmark cannot run).
func TestSideBySide(t *testing.T) {
	if !*tableFlag {
		t.Skip("pass -table to measure and print the side-by-side table")
	}
	w := SharedWorkload()
	rows := make([]*Row, 0, len(Ops)+1)
	for _, op := range Ops {
		unit := "ns/op"
		if op.Name == SnapshotIncremental.Name {
			unit = "ns/node"
		}
		rows = append(rows, NewRow(op, unit))
	}
	heap := NewRow(HeapOp, "B/pod")
	rows = append(rows, heap)

	for round := 1; round <= *roundsFlag; round++ {
		for _, v := range Variants {
			f, err := NewFixture(v, w, *pauseGCFlag)
			if err != nil {
				t.Fatal(err)
			}
			for i, op := range Ops {
				rows[i].Record(v.Name, measure(t, op.Name+"/"+v.Name, iterations(op.Iterations), op.Run(f)))
			}
			f.Close()
			heap.Record(v.Name, measure(t, HeapOp.Name+"/"+v.Name, HeapOp.Iterations, HeapPerPod(v, w)))
		}
		t.Logf("round %d of %d done", round, *roundsFlag)
	}

	fmt.Printf("\n## Side by side: multicache / kube-scheduler cache\n\n")
	fmt.Printf("%d nodes, %d pods; %s; %d rounds, iterations per round scaled by %g.\n\n",
		NumNodes, NumPods, harness.Machine(".."), *roundsFlag, *scaleFlag)
	WriteTable(os.Stdout, rows, *roundsFlag)
	fmt.Println()
	for _, op := range append(Ops, HeapOp) {
		fmt.Printf("- %s (%d iterations per round): %s.\n", op.Name, iterations(op.Iterations), op.Doc)
	}
	fmt.Println()
}

// measure runs one benchmark body n times with benchmarkN, prints its result as go test
// -bench would, and fails the test if it could not run.
func measure(t *testing.T, name string, n int, body func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	res := benchmarkN(t, n, body)
	if res.N == 0 {
		t.Fatalf("%s: the benchmark failed", name)
	}
	fmt.Printf("Benchmark%s\t%s\t%s\n", name, res.String(), res.MemString())
	return res
}
