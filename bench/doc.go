// Package bench measures multicache against kube-scheduler's own cache
// (k8s.io/kubernetes/pkg/scheduler/backend/cache) on the same workload, in one process.
//
// The workload (workload.go) is 5,000 nodes and 150,000 bound pods, 30 per node, each with
// cpu and memory requests. It is built once per process, before anything is timed, and the
// same pod pointers are handed to every cache. Three variants are measured (variants.go):
//
//   - kube: kube-scheduler's cache, the anchor every ratio is taken against;
//   - mc-core: multicache with only its required stores (nodes and pods);
//   - mc-all: multicache with all the built-in stores, the default configuration.
//
// Every operation (ops.go) runs on a cache already loaded with the full workload (fixture.go),
// with garbage collection kept out of the timed sections (gc.go). The standard benchmarks
// (go test -bench .) print one line per operation and variant; TestSideBySide, enabled by
// -table, measures every operation and variant again with testing.Benchmark and prints the
// multicache/kube ratios with their targets (table.go, render.go); the reaper benchmarks
// (reaper.go) show how a reaper tick's cost grows with the number of reservations. go test
// without -table only checks that the benchmark bodies do what they say. BENCHMARKS.md at the
// repository root holds a measured run.
package bench
