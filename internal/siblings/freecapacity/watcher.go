// Package freecapacity is a sibling controller: it runs in the operator's process and reads
// the cache in-process, through an incremental snapshot, to find the nodes whose free
// guaranteed resources fell under a fraction of their allocatable. It logs each node when it
// crosses the threshold (once per crossing) and exports how many nodes are low per resource
// as multicache_nodes_low_free{resource}.
//
// It is built through the same SiblingFactory path as out-of-tree siblings (see
// docs/EXTENDING.md and examples/out-of-tree/zonewatch, the example to copy).
package freecapacity

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// LowNodes is multicache_nodes_low_free{resource}.
var LowNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "multicache_nodes_low_free",
	Help: "Nodes whose free guaranteed cpu or memory is below the --low-free-threshold fraction of allocatable.",
}, []string{"resource"})

// Watcher scans the cache every Period.
type Watcher struct {
	cache     *handler.Handler
	threshold float64
	period    time.Duration
	log       logr.Logger
	snapshot  *handler.Snapshot
	low       map[string]bool
}

// New returns a watcher of the nodes whose free cpu or memory is below threshold (a fraction
// of allocatable, 0 < threshold < 1), scanning every period.
func New(cache *handler.Handler, threshold float64, period time.Duration, log logr.Logger) *Watcher {
	return &Watcher{cache: cache, threshold: threshold, period: period, log: log, low: map[string]bool{}}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: it only reads the cache,
// which is warm on every replica.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (w *Watcher) Start(ctx context.Context) error {
	ticker := time.NewTicker(w.period)
	defer ticker.Stop()
	for {
		w.Scan()
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Scan refreshes the snapshot (copying only the nodes that changed since the last scan) and
// re-evaluates every node. It returns the nodes that are low.
func (w *Watcher) Scan() []string {
	if w.snapshot == nil {
		w.snapshot = w.cache.NewSnapshot(store.SnapshotOptions{})
	}
	_ = w.cache.UpdateSnapshot(w.snapshot)
	lowCPU, lowMemory := 0, 0
	var lowNodes []string
	seen := map[string]bool{}
	for _, info := range w.snapshot.Nodes().List() {
		seen[info.Name] = true
		cpu, memory := w.isLow(info)
		if cpu {
			lowCPU++
		}
		if memory {
			lowMemory++
		}
		low := cpu || memory
		if low {
			lowNodes = append(lowNodes, info.Name)
		}
		if low != w.low[info.Name] {
			free := info.Free()
			w.log.Info("node free capacity crossed the threshold", "node", info.Name, "low", low,
				"freeMilliCPU", free.MilliCPU, "freeMemory", free.Memory, "threshold", w.threshold)
			w.low[info.Name] = low
		}
	}
	for name := range w.low {
		if !seen[name] {
			delete(w.low, name)
		}
	}
	LowNodes.WithLabelValues("cpu").Set(float64(lowCPU))
	LowNodes.WithLabelValues("memory").Set(float64(lowMemory))
	return lowNodes
}

// isLow reports, per resource, whether a node with allocatable has less than threshold of
// it free. Nodes without allocatable (only pods or a CNR known) are not judged.
func (w *Watcher) isLow(info *store.NodeInfo) (cpu, memory bool) {
	free := info.Free()
	if a := info.Allocatable.MilliCPU; a > 0 {
		cpu = float64(free.MilliCPU) < w.threshold*float64(a)
	}
	if a := info.Allocatable.Memory; a > 0 {
		memory = float64(free.Memory) < w.threshold*float64(a)
	}
	return cpu, memory
}
