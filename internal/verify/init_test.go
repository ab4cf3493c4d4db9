package verify

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// kindsCache is a fakeCache that watches the given kinds.
type kindsCache struct {
	fakeCache
	kinds []stores.Kind
}

func (c *kindsCache) WatchedKinds() []stores.Kind { return c.kinds }

// TestStart_ShowsZeroDriftForEveryWatchedKind: before anything drifted, every watched kind
// has a multicache_drift_total series at 0 (a dashboard shows 0, not "No data").
func TestStart_ShowsZeroDriftForEveryWatchedKind(t *testing.T) {
	kinds := []stores.Kind{stores.KindNMNode, stores.KindMovement}
	l := &Loop{Cache: &kindsCache{kinds: kinds}, Period: 1 << 40}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.DriftTotal)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "kind" {
					series[lp.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	for _, k := range kinds {
		if v, ok := series[string(k)]; !ok || v != 0 {
			t.Errorf("multicache_drift_total{kind=%q}: present %v, value %v; want a series at 0", k, ok, v)
		}
	}
}
