package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestWriteShards_ARunCutShortStillReports: a run stopped in a split's first round (a shard
// that never came up) renders what it measured instead of failing the whole report.
func TestWriteShards_ARunCutShortStillReports(t *testing.T) {
	whole := ColdStart{Subject: "multicache (whole cluster)", Full: time.Second, SettledRSS: 100 << 20, PeakRSS: 100 << 20}
	shard := ColdStart{Subject: "multicache-shard-0-of-4", Full: time.Second / 2, SettledRSS: 50 << 20, PeakRSS: 50 << 20}
	res := &Result{Config: Config{Size: Sizes["small"]}, ShardRun: &ShardRun{
		Wholes: []ColdStart{whole},
		Splits: []SplitRun{{K: 4, Shards: [][]ColdStart{{shard}}}, {K: 8}},
	}}
	var b strings.Builder
	writeShards(&b, res)
	if !strings.Contains(b.String(), "multicache (whole cluster)") {
		t.Errorf("the whole replica is missing from the report:\n%s", b.String())
	}
}
