package metrics

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRegister_KnownLabelsStartAtZero: multicache_reserve_on_delete_total has a series for
// every result from the start, so a dashboard panel shows 0 rather than no data.
func TestRegister_KnownLabelsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, f := range families {
		if f.GetName() != "multicache_reserve_on_delete_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					results = append(results, l.GetValue())
				}
			}
		}
	}
	slices.Sort(results)
	if want := []string{"cannot_keep", "consumed", "expired", "held", "invalid_annotation", "not_needed", "released_scale_down"}; !slices.Equal(results, want) {
		t.Errorf("multicache_reserve_on_delete_total results %v at start, want %v", results, want)
	}
}
