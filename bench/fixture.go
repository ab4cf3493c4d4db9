package bench

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Fixture is one cache loaded with the whole workload, and what the benchmarks need to keep
// it that way: which version of every pod it holds, and cursors so that successive runs of a
// benchmark keep moving over different pods and nodes. Between two benchmark runs a fixture
// always holds every node and every pod.
type Fixture struct {
	// Variant is what the cache is.
	Variant Variant
	// Cache is the loaded cache.
	Cache Cache
	// W is the workload it is loaded with.
	W *Workload
	// GC keeps collections out of the timed sections of the fixture's benchmarks.
	GC GCControl

	// version is the version of every pod the cache holds.
	version []uint8
	// slot is the next slot handed out by NextSlot.
	slot int
	// podCursor is the next pod UpdatePod changes.
	podCursor int
	// nodeCursor is the first of the next nodes the incremental snapshot changes.
	nodeCursor int
	// snap is the snapshot the incremental snapshot benchmark keeps up to date.
	snap Snapshot
}

// NewFixture builds a cache of variant v and loads it with every node and pod of w. Its
// benchmarks pause the collector (see GCControl) when pauseGC is set.
func NewFixture(v Variant, w *Workload, pauseGC bool) (*Fixture, error) {
	f := &Fixture{Variant: v, Cache: v.New(), W: w, GC: GCControl{Paused: pauseGC}, version: make([]uint8, w.NumPods())}
	if err := LoadNodes(f.Cache, w); err != nil {
		return nil, err
	}
	for i := range f.version {
		if err := f.Add(i); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// LoadNodes adds every node of w to c.
func LoadNodes(c Cache, w *Workload) error {
	for _, n := range w.Nodes {
		if err := c.AddNode(n); err != nil {
			return fmt.Errorf("add node %s: %w", n.Name, err)
		}
	}
	return nil
}

// Close releases the cache.
func (f *Fixture) Close() { f.Cache.Close() }

// Pod returns the version of pod i the cache holds (or held last).
func (f *Fixture) Pod(i int) *corev1.Pod { return f.W.Versions[f.version[i]][i] }

// Add adds pod i (the version last held).
func (f *Fixture) Add(i int) error { return f.check("add", i, f.Cache.AddPod(f.Pod(i))) }

// Remove removes pod i.
func (f *Fixture) Remove(i int) error { return f.check("remove", i, f.Cache.RemovePod(f.Pod(i))) }

// Update replaces pod i with its other version.
func (f *Fixture) Update(i int) error {
	next := 1 - f.version[i]
	err := f.Cache.UpdatePod(f.Pod(i), f.W.Versions[next][i])
	f.version[i] = next
	return f.check("update", i, err)
}

// Assume assumes pod i (which the cache must not hold) and finishes its binding.
func (f *Fixture) Assume(i int) error { return f.check("assume", i, f.Cache.AssumePod(f.Pod(i))) }

// Forget forgets the assumed pod i.
func (f *Fixture) Forget(i int) error { return f.check("forget", i, f.Cache.ForgetPod(f.Pod(i))) }

// NextSlot returns the pods of the next slot: one pod on every node, a different slot each
// time, round robin.
func (f *Fixture) NextSlot() []int {
	idx := f.W.Slot(f.slot)
	f.slot = (f.slot + 1) % (f.W.NumPods() / len(f.W.Nodes))
	return idx
}

// NextPod returns the next pod to update, round robin over every pod, node after node.
func (f *Fixture) NextPod() int {
	i := f.podCursor
	f.podCursor = (f.podCursor + 1) % f.W.NumPods()
	return i
}

// ChangeNodes updates one pod on each of the next n nodes, round robin over the nodes.
func (f *Fixture) ChangeNodes(n int) error {
	nodes := len(f.W.Nodes)
	for k := 0; k < n; k++ {
		node := (f.nodeCursor + k) % nodes
		slot := ((f.nodeCursor + k) / nodes) % (f.W.NumPods() / nodes)
		if err := f.Update(slot*nodes + node); err != nil {
			return err
		}
	}
	f.nodeCursor += n
	return nil
}

func (f *Fixture) check(op string, i int, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %s pod %s: %w", f.Variant.Name, op, f.Pod(i).Name, err)
	}
	return nil
}

// Verify checks that the cache holds exactly the workload: every pod, as the very object
// the fixture last gave it, every node in a fresh snapshot, and, for multicache (which
// checks itself), no violated invariant.
func (f *Fixture) Verify() error {
	var errs []error
	for i := range f.version {
		got, err := f.Cache.GetPod(f.Pod(i))
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", f.Pod(i).Name, err))
		} else if got != f.Pod(i) {
			errs = append(errs, fmt.Errorf("pod %s: the cache holds another object", f.Pod(i).Name))
		}
	}
	snap := f.Cache.NewSnapshot()
	if err := f.Cache.UpdateSnapshot(snap); err != nil {
		errs = append(errs, err)
	} else if got := f.Cache.SnapshotLen(snap); got != len(f.W.Nodes) {
		errs = append(errs, fmt.Errorf("a fresh snapshot holds %d nodes, want %d", got, len(f.W.Nodes)))
	}
	if c, ok := f.Cache.(*multicache); ok {
		errs = append(errs, c.h.CheckInvariants()...)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", f.Variant.Name, err)
	}
	return nil
}

// Each applies fn to every pod index of idx, stopping at the first error.
func Each(idx []int, fn func(int) error) error {
	for _, i := range idx {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}
