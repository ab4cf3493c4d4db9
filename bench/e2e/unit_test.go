package e2e

import (
	"os"
	"testing"
	"time"
)

func TestParseMetrics(t *testing.T) {
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
		if got, ok := m.Get(key); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", key, got, ok, want)
		}
	}
	if m := ParseMetrics([]byte(text), "multicache_"); len(m) != 2 {
		t.Errorf("prefix multicache_: %v, want 2 samples", m)
	}
}

func TestMatchLags(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sample := func(ms int, adds float64) eventSample {
		return eventSample{at: at(ms), applied: [numOps]float64{opCreate: adds}}
	}
	// Base 10 adds; writes answered at 0, 5, 20 ms; the counter reaches 11 at 10 ms, 13 at 30 ms.
	samples := []eventSample{sample(0, 10), sample(10, 11), sample(20, 11), sample(30, 13)}
	lags, missing := matchLags([]time.Time{at(0), at(5), at(20)}, samples, opCreate, 10)
	want := []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 10 * time.Millisecond}
	if missing != 0 || len(lags) != len(want) {
		t.Fatalf("lags %v missing %d, want %v", lags, missing, want)
	}
	for i := range want {
		if lags[i] != want[i] {
			t.Errorf("lag %d = %v, want %v", i, lags[i], want[i])
		}
	}
	// A fourth write the counter never shows.
	if _, missing := matchLags([]time.Time{at(0), at(5), at(20), at(25)}, samples, opCreate, 10); missing != 1 {
		t.Errorf("missing = %d, want 1", missing)
	}
	// An event applied before the write's answer arrived counts as zero lag.
	if lags, _ := matchLags([]time.Time{at(15)}, samples, opCreate, 10); lags[0] != 0 {
		t.Errorf("early event: lag %v, want 0", lags[0])
	}
}

func TestQuantiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	q := quantiles(d)
	if q.N != 100 || q.P50 != 50*time.Millisecond || q.P99 != 99*time.Millisecond || q.Max != 100*time.Millisecond {
		t.Errorf("quantiles = %+v", q)
	}
	if q := quantiles(nil); q.N != 0 {
		t.Errorf("quantiles(nil) = %+v", q)
	}
}

func TestProc(t *testing.T) {
	mem, err := ReadMem(os.Getpid())
	if err != nil || mem.RSS <= 0 || mem.HWM < mem.RSS {
		t.Errorf("ReadMem = %+v, %v", mem, err)
	}
	if _, err := ReadCPU(os.Getpid()); err != nil {
		t.Errorf("ReadCPU: %v", err)
	}
}

func TestSizes(t *testing.T) {
	s, err := ParseSize("medium")
	if err != nil || s.Nodes != 1000 || s.Pods != 30000 {
		t.Fatalf("medium = %+v, %v", s, err)
	}
	if s.ReplicaSets() != 3000 || s.Namespaces() != 10 || s.PodGroups() != 300 || s.PDBs() != 600 || s.Reservations() != 100 {
		t.Errorf("medium derived: %s", s)
	}
	if s, err := ParseSize("10/25"); err != nil || s.Nodes != 10 || s.Pods != 25 || s.ReplicaSets() != 3 || podsOf(s, 2) != 5 {
		t.Errorf("10/25 = %+v, %v", s, err)
	}
	if _, err := ParseSize("huge"); err == nil {
		t.Error("ParseSize(huge) succeeded")
	}
}

// TestShardWant: the shards' nodes and pods add up to the cluster, and shard s holds the
// nodes and pods numbered s mod 4.
func TestShardWant(t *testing.T) {
	for _, size := range []Size{Sizes["small"], Sizes["medium"], {Name: "odd", Nodes: 6, Pods: 7}} {
		var nodes, pods int
		for s := range MaxShards {
			w := ShardWant(size, s)
			nodes, pods = nodes+w.Nodes, pods+w.Pods
		}
		if nodes != size.Nodes || pods != size.Pods {
			t.Errorf("%s: shards hold %d nodes / %d pods, want %d / %d", size.Name, nodes, pods, size.Nodes, size.Pods)
		}
	}
	if w := ShardWant(Sizes["medium"], 1); w.Nodes != 250 || w.Pods != 7500 {
		t.Errorf("medium shard 1: %+v, want 250 nodes / 7,500 pods", w)
	}
}
