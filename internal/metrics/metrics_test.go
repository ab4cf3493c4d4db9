package metrics

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRegister_KnownLabelsStartAtZero: the counters whose results are known in advance have
// a series for every result from the start, so a dashboard panel shows 0 rather than no
// data.
func TestRegister_KnownLabelsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					results[f.GetName()] = append(results[f.GetName()], l.GetValue())
				}
			}
		}
	}
	for name, want := range map[string][]string{
		"multicache_reserve_on_delete_total":  {"cannot_keep", "consumed", "expired", "held", "invalid_annotation", "not_needed", "released_scale_down"},
		"multicache_invariant_rechecks_total": {"cleared", "confirmed"},
	} {
		got := results[name]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s results %v at start, want %v", name, got, want)
		}
	}
}
