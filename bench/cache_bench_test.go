package bench

import "testing"

// runOp runs op as one sub-benchmark per variant, each on its own freshly loaded fixture
// (only one cache is alive at a time).
func runOp(b *testing.B, op Op) {
	w := SharedWorkload()
	for _, v := range Variants {
		f, err := NewFixture(v, w, *pauseGCFlag)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(v.Name, op.Run(f))
		f.Close()
	}
}

func BenchmarkAddPod(b *testing.B)              { runOp(b, AddPod) }
func BenchmarkUpdatePod(b *testing.B)           { runOp(b, UpdatePod) }
func BenchmarkRemovePod(b *testing.B)           { runOp(b, RemovePod) }
func BenchmarkAssumePod(b *testing.B)           { runOp(b, AssumePod) }
func BenchmarkSnapshotFull(b *testing.B)        { runOp(b, SnapshotFull) }
func BenchmarkSnapshotIncremental(b *testing.B) { runOp(b, SnapshotIncremental) }

func BenchmarkHeapPerPod(b *testing.B) {
	w := SharedWorkload()
	for _, v := range Variants {
		b.Run(v.Name, HeapPerPod(v, w))
	}
}
