package bench

import (
	"fmt"
	"testing"
)

// ChangedNodes is how many nodes change between two updates of an incremental snapshot.
const ChangedNodes = 50

// Op is one operation measured on a fixture holding the whole workload.
type Op struct {
	// Name is the benchmark's name (BenchmarkName/variant).
	Name string
	// Doc says what one iteration (one op of ns/op) measures.
	Doc string
	// PerEvent marks the operations a single cluster event (or scheduling step) causes.
	PerEvent bool
	// Run returns the benchmark body for a fixture. It leaves the fixture full.
	Run func(f *Fixture) func(b *testing.B)
	// Iterations is how many times the side-by-side table runs the op per round (the
	// standard benchmarks follow -benchtime instead). A fixed count keeps rounds
	// comparable.
	Iterations int
}

// eventIterations is Op.Iterations of the per-event operations: every pod once, so that
// every slot, and so every position in the nodes' pod lists (which both caches scan),
// counts equally.
const eventIterations = NumPods

// The operations, in table order.
var (
	// AddPod adds one bound pod.
	AddPod = Op{Name: "AddPod", PerEvent: true, Run: benchAddPod, Iterations: eventIterations,
		Doc: "AddPod of one bound pod into a cache holding the workload less one slot (145,000 to 150,000 pods); " +
			"one pod per node is taken out untimed before a slot is added back"}
	// UpdatePod replaces a cached pod with its next version.
	UpdatePod = Op{Name: "UpdatePod", PerEvent: true, Run: benchUpdatePod, Iterations: eventIterations,
		Doc: "UpdatePod of one cached pod to its next version (a status update: same node, same requests) in the full cache"}
	// RemovePod removes a cached pod.
	RemovePod = Op{Name: "RemovePod", PerEvent: true, Run: benchRemovePod, Iterations: eventIterations,
		Doc: "RemovePod of one cached pod from the full cache (down to 145,000 pods); each removed slot is added back untimed"}
	// AssumePod assumes a pod and finishes its binding.
	AssumePod = Op{Name: "AssumePod", PerEvent: true, Run: benchAssumePod, Iterations: eventIterations,
		Doc: "AssumePod then FinishBinding of one pod (kube: AssumePod alone, v1.37 has no FinishBinding) into a cache holding " +
			"the workload less one slot; assumed pods are forgotten and re-added untimed"}
	// SnapshotFull builds a fresh snapshot of the whole cache.
	SnapshotFull = Op{Name: "SnapshotFull", Run: benchSnapshotFull, Iterations: 200,
		Doc: "a new empty snapshot filled by UpdateSnapshot from the full cache: 5,000 nodes, 150,000 pods"}
	// SnapshotIncremental updates an existing snapshot after 50 nodes changed.
	SnapshotIncremental = Op{Name: "SnapshotIncremental", Run: benchSnapshotIncremental, Iterations: 5_000,
		Doc: fmt.Sprintf("UpdateSnapshot of an up-to-date snapshot after one pod on each of %d nodes was updated (untimed); "+
			"ns/node is ns/op divided by %d", ChangedNodes, ChangedNodes)}

	// Ops lists them in table order.
	Ops = []Op{AddPod, UpdatePod, RemovePod, AssumePod, SnapshotFull, SnapshotIncremental}
)

func benchAddPod(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		batched(b, f,
			func(slot []int) error { return Each(slot, f.Remove) },
			f.Add,
			func(slot []int, done int) error { return Each(slot[done:], f.Add) })
	}
}

func benchRemovePod(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		batched(b, f,
			func([]int) error { return nil },
			f.Remove,
			func(slot []int, done int) error { return Each(slot[:done], f.Add) })
	}
}

func benchAssumePod(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		batched(b, f,
			func(slot []int) error { return Each(slot, f.Remove) },
			f.Assume,
			func(slot []int, done int) error {
				if err := Each(slot[:done], f.Forget); err != nil {
					return err
				}
				return Each(slot, f.Add)
			})
	}
}

func benchUpdatePod(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		b.StopTimer()
		f.GC.Start(b)
		b.StartTimer()
		for i := 0; i < b.N; i++ {
			if i%len(f.W.Nodes) == 0 && i > 0 {
				b.StopTimer()
				f.GC.Between()
				b.StartTimer()
			}
			if err := f.Update(f.NextPod()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchSnapshotFull(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		b.StopTimer()
		f.GC.Start(b)
		var snap Snapshot
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			snap = nil
			f.GC.Between()
			b.StartTimer()
			snap = f.Cache.NewSnapshot()
			if err := f.Cache.UpdateSnapshot(snap); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		checkSnapshot(b, f, snap)
	}
}

func benchSnapshotIncremental(f *Fixture) func(b *testing.B) {
	return func(b *testing.B) {
		b.StopTimer()
		f.GC.Start(b)
		if f.snap == nil {
			f.snap = f.Cache.NewSnapshot()
		}
		// Catch up, untimed, with whatever changed since the last run.
		fatalIf(b, f.Cache.UpdateSnapshot(f.snap))
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fatalIf(b, f.ChangeNodes(ChangedNodes))
			f.GC.Between()
			b.StartTimer()
			if err := f.Cache.UpdateSnapshot(f.snap); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		checkSnapshot(b, f, f.snap)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ChangedNodes), "ns/node")
	}
}

// batched times op on the pods of successive slots (one pod per node). Before a slot is
// used, prepare brings the cache into the state op expects; once the slot is used up, or
// the run ends, restore brings the cache back to the full workload, given how many of the
// slot's pods op was applied to. Only op is timed: prepare and restore (and a collection,
// when the fixture's GCControl calls for one) run once per 5,000 ops, so stopping the
// timer costs nothing measurable.
func batched(b *testing.B, f *Fixture, prepare func(slot []int) error, op func(i int) error, restore func(slot []int, done int) error) {
	b.StopTimer()
	f.GC.Start(b)
	slot, done := f.NextSlot(), 0
	fatalIf(b, prepare(slot))
	b.StartTimer()
	for i := 0; i < b.N; i++ {
		if done == len(slot) {
			b.StopTimer()
			fatalIf(b, restore(slot, done))
			slot, done = f.NextSlot(), 0
			fatalIf(b, prepare(slot))
			f.GC.Between()
			b.StartTimer()
		}
		if err := op(slot[done]); err != nil {
			b.Fatal(err)
		}
		done++
	}
	b.StopTimer()
	fatalIf(b, restore(slot, done))
}

// checkSnapshot fails the benchmark unless snap holds every node of the workload.
func checkSnapshot(b *testing.B, f *Fixture, snap Snapshot) {
	if got := f.Cache.SnapshotLen(snap); got != len(f.W.Nodes) {
		b.Fatalf("%s: snapshot holds %d nodes, want %d", f.Variant.Name, got, len(f.W.Nodes))
	}
}

func fatalIf(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}
