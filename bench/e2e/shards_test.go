package e2e

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

func TestMemSplit_ParsesTheMemStatsOfAHeapProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	var m MemSplit
	if err := m.parseMemStats(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if m.HeapInuse <= 0 || m.Stacks <= 0 || m.Runtime <= 0 || m.NextGC <= 0 || m.HeapRetained < 0 {
		t.Errorf("%+v: want positive heap in use, stacks, runtime metadata and heap goal", m)
	}
	if err := m.parseMemStats([]byte("heap profile: 0: 0 [0: 0] @ heap/1048576\n")); err == nil {
		t.Error("a profile without MemStats parsed")
	}
}

// TestWriteShards_ARunCutShortStillReports: a run stopped in a split's first round (a shard
// that never came up) renders what it measured instead of failing the whole report.
func TestWriteShards_ARunCutShortStillReports(t *testing.T) {
	whole := ColdStart{Subject: "multicache (whole cluster)", Full: time.Second, SettledRSS: 100 << 20, PeakRSS: 100 << 20}
	shard := ColdStart{Subject: "multicache-shard-0-of-4", Full: time.Second / 2, SettledRSS: 50 << 20, PeakRSS: 50 << 20}
	res := &Result{Config: Config{Size: Sizes["small"]}, ShardRun: &ShardRun{
		Wholes: []ColdStart{whole}, WholeMem: []MemSplit{{}},
		Splits: []SplitRun{{K: 4, Shards: [][]ColdStart{{shard}}, Mem: [][]MemSplit{{{}}}}, {K: 8}},
	}}
	var b strings.Builder
	writeShards(&b, res)
	if !strings.Contains(b.String(), "multicache (whole cluster)") {
		t.Errorf("the whole replica is missing from the report:\n%s", b.String())
	}
}
