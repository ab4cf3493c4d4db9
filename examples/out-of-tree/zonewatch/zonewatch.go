// Package zonewatch is a sibling controller registered out of tree: it reads the zones
// store in process, through an incremental snapshot, exports the pods of every zone and the
// number of workloads a single zone outage would take down whole, and logs each such
// workload when it becomes one. It writes nothing to the API, so it runs on every replica.
package zonewatch

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/examples/out-of-tree/zonestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Metrics the watcher exports.
var (
	// ZonePods is zones_pods{zone}: the pods of each zone, as the cache counts them.
	ZonePods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zones_pods", Help: "Pods per topology zone (zone=\"\": node without a zone label).",
	}, []string{"zone"})
	// SingleZoneWorkloads is zones_single_zone_workloads.
	SingleZoneWorkloads = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "zones_single_zone_workloads", Help: "Workloads with two or more pods, all in one zone.",
	})
)

// Period is how often the watcher scans.
const Period = time.Second

// Watcher scans the zones store every Period.
type Watcher struct {
	cache  multicache.Reader
	log    logr.Logger
	snap   *multicache.Snapshot
	single map[store.OwnerKey]bool
}

// New is the sibling's factory (multicache.WithSibling(zonewatch.New)). Without the zones
// store (--stores leaves it out) it stays off.
func New(deps multicache.SiblingDeps) (multicache.Sibling, error) {
	if !deps.Options.StoreEnabled(zonestore.Name) {
		deps.Log.Info("the zones store is disabled (--stores): zonewatch stays off")
		return nil, nil
	}
	for _, c := range []prometheus.Collector{ZonePods, SingleZoneWorkloads} {
		var already prometheus.AlreadyRegisteredError
		if err := deps.Metrics.Register(c); err != nil && !errors.As(err, &already) {
			return nil, err
		}
	}
	return &Watcher{cache: deps.Reader, log: deps.Log.WithName("zonewatch"), single: map[store.OwnerKey]bool{}}, nil
}

// NeedLeaderElection implements multicache.Sibling: it only reads.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Start implements multicache.Sibling.
func (w *Watcher) Start(ctx context.Context) error {
	w.snap = w.cache.NewSnapshot(multicache.SnapshotOptions{})
	ticker := time.NewTicker(Period)
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

// Scan refreshes the snapshot (copying only what changed) and exports what it finds.
func (w *Watcher) Scan() {
	_ = w.cache.UpdateSnapshot(w.snap)
	zs, ok := w.snap.Part(zonestore.Name).(*zonestore.Snapshot)
	if !ok {
		return
	}
	ZonePods.Reset()
	for zone, n := range zs.Zones() {
		ZonePods.WithLabelValues(zone).Set(float64(n))
	}
	now := map[store.OwnerKey]bool{}
	for _, owner := range zs.SingleZone() {
		now[owner] = true
		if !w.single[owner] {
			w.log.Info("workload runs in a single zone", "kind", owner.Type, "namespace", owner.Namespace,
				"name", owner.Name, "zones", zs.Spread()[owner])
		}
	}
	w.single = now
	SingleZoneWorkloads.Set(float64(len(now)))
}
