package bench

import (
	"runtime"
	"testing"
)

// HeapPerPod is the benchmark body that measures what caching a pod costs in heap: each
// iteration builds a cache of v holding every node of w, reads the live heap after a full
// GC, loads every pod (timed: ns/op is the load of the whole workload), and reads the live
// heap again after a full GC. The pods themselves were allocated before the first reading,
// so only what the cache allocates for them counts. It reports B/pod.
func HeapPerPod(v Variant, w *Workload) func(b *testing.B) {
	return func(b *testing.B) {
		var grown int64
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := v.New()
			fatalIf(b, LoadNodes(c, w))
			before := liveHeap()
			b.StartTimer()
			for _, p := range w.Versions[0] {
				if err := c.AddPod(p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			grown += int64(liveHeap()) - int64(before)
			runtime.KeepAlive(c)
			c.Close()
		}
		b.ReportMetric(float64(grown)/float64(b.N*w.NumPods()), "B/pod")
	}
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// HeapOp is the heap measurement as a table row: the compared metric is B/pod.
var HeapOp = Op{Name: HeapPerPodName, Iterations: 1,
	Doc: "live heap the cache adds for the 150,000 pods, per pod (B/pod): full GC and HeapAlloc before and after loading " +
		"every pod into a cache holding the 5,000 nodes; ns/op is the whole load"}
