package harness

import "testing"

func TestParseMetrics_KeepsSeriesAsWrittenAndFiltersByPrefix(t *testing.T) {
	text := `# HELP scheduler_cache_size Number of nodes, pods, and assumed (bound) pods in the scheduler cache.
# TYPE scheduler_cache_size gauge
scheduler_cache_size{type="assumed_pods"} 0
scheduler_cache_size{type="nodes"} 100
scheduler_cache_size{type="pods"} 3000
multicache_cache_caught_up 1
multicache_events_total{kind="Pod",op="add",result="ok"} 3.5e+06
`
	m := ParseMetrics([]byte(text))
	for key, want := range map[string]float64{
		`scheduler_cache_size{type="nodes"}`:                       100,
		`scheduler_cache_size{type="pods"}`:                        3000,
		`multicache_cache_caught_up`:                               1,
		`multicache_events_total{kind="Pod",op="add",result="ok"}`: 3.5e6,
	} {
		if got, ok := m[key]; !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", key, got, ok, want)
		}
	}
	if m := ParseMetrics([]byte(text), "multicache_"); len(m) != 2 {
		t.Errorf("prefix multicache_: %v, want 2 samples", m)
	}
}

func TestMetrics_SumAndByLabelAddSeriesByLabel(t *testing.T) {
	m := ParseMetrics([]byte(`a_total{x="1",y="p"} 2
a_total{x="2",y="p"} 3
a_total{x="2",y="q"} 4
ab_total{x="1"} 100
`))
	if got := m.Sum("a_total", `y="p"`); got != 5 {
		t.Errorf("Sum(a_total, y=p) = %v, want 5", got)
	}
	if got := m.ByLabel("a_total", "x"); got["1"] != 2 || got["2"] != 7 || len(got) != 2 {
		t.Errorf("ByLabel(a_total, x) = %v, want 1:2 2:7", got)
	}
}
