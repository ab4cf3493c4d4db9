package handler

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// largeCache is a handler holding 5,000 nodes and 150,000 pods.
func largeCache(b *testing.B) *Handler {
	h, _ := newQuietHandler(b)
	const nodes, pods = 5000, 150000
	for i := range nodes {
		must(b, h.Add(ts.MakeNode(fmt.Sprintf("n-%05d", i), "64", "256Gi")))
	}
	for i := range pods {
		must(b, h.Add(ts.MakePod("ns", fmt.Sprintf("p-%06d", i), ts.OnNode(fmt.Sprintf("n-%05d", i%nodes)), ts.Requests("100m", "128Mi"))))
	}
	return h
}

// BenchmarkDump_Served compares, at 5,000 nodes and 150,000 pods, what serving /debug/cache
// allocates (B/op) and how far the live heap grows above the cache while it runs
// (peak-live-heap-MiB, sampled at every write to the client) when the whole document is
// built from the stores' Dumps and then encoded, and when it is streamed part by part
// (WriteDump). Run:
// go test -run '^$' -bench BenchmarkDump_Served -benchmem ./internal/handler
func BenchmarkDump_Served(b *testing.B) {
	h := largeCache(b)
	for _, c := range []struct {
		name  string
		serve func(io.Writer) error
	}{
		{"build-then-encode", func(w io.Writer) error {
			_, err := w.Write(encodeReference(b, h, true))
			return err
		}},
		{"stream", func(w io.Writer) error { return h.WriteDump(context.Background(), w, DumpIndented) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				must(b, c.serve(io.Discard))
			}
			// Once more, untimed, with the heap followed.
			w := newHeapSampler()
			must(b, c.serve(w))
			w.report(b)
		})
	}
}

// heapSampler discards what is written and records the largest live heap above the one it
// started at (as the last collection measured it, read at every write; collections are
// made frequent so that it follows the live heap closely). Call report when done.
type heapSampler struct {
	sample     []metrics.Sample
	base, peak uint64
	written    int
	gcPercent  int
}

func newHeapSampler() *heapSampler {
	w := &heapSampler{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, gcPercent: debug.SetGCPercent(5)}
	runtime.GC()
	w.base = w.heap()
	return w
}

func (w *heapSampler) heap() uint64 {
	metrics.Read(w.sample)
	return w.sample[0].Value.Uint64()
}

func (w *heapSampler) Write(p []byte) (int, error) {
	w.peak = max(w.peak, w.heap())
	w.written += len(p)
	return len(p), nil
}

func (w *heapSampler) report(b *testing.B) {
	debug.SetGCPercent(w.gcPercent)
	b.ReportMetric(float64(w.peak-min(w.base, w.peak))/(1<<20), "peak-live-heap-MiB")
	b.ReportMetric(float64(w.written)/(1<<20), "doc-MiB")
}
