package bench

import "testing"

// TestOpsKeepFixturesFull runs every operation's benchmark body on a small workload, for
// every variant, and checks after each that the cache still holds exactly the workload:
// what the benchmarks time is what they say, and every run starts from a full cache.
func TestOpsKeepFixturesFull(t *testing.T) {
	w := NewWorkload(20, 3)
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			f, err := NewFixture(v, w, true)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Verify(); err != nil {
				t.Fatalf("after loading: %v", err)
			}
			for _, op := range Ops {
				// 50 iterations cross slot boundaries (20 pods a slot) and wrap the nodes.
				if res := benchmarkN(t, 50, op.Run(f)); res.N != 50 {
					t.Fatalf("%s: the benchmark failed", op.Name)
				}
				if err := f.Verify(); err != nil {
					t.Fatalf("after %s: %v", op.Name, err)
				}
			}
			res := benchmarkN(t, 1, HeapPerPod(v, w))
			if res.N != 1 || res.Extra["B/pod"] <= 0 {
				t.Fatalf("%s: heap per pod %v", HeapOp.Name, res.Extra)
			}
		})
	}
}

// TestReaperTickExpiresExactlyDue runs the reaper benchmark on a small fixture: every tick
// must expire exactly DuePerTick reservations (the body fails otherwise), across several
// turns of the recycled queue, and leave the handler consistent.
func TestReaperTickExpiresExactlyDue(t *testing.T) {
	f, err := NewReaperFixture(1000, true)
	if err != nil {
		t.Fatal(err)
	}
	if res := benchmarkN(t, 35, ReaperTick(f)); res.N != 35 {
		t.Fatal("the reaper benchmark failed")
	}
	for _, err := range f.H.CheckInvariants() {
		t.Error(err)
	}
}
