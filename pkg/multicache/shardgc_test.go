package multicache

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/operator"
)

// A sub-cluster replica fills at the steady GC percent; a whole-cluster replica fills at
// GOGC (100) and switches once caught up; GOGC, when set, wins in both.
func TestShardFillsSteady_OnlyASubClusterReplicaAndOnlyWithoutGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	percent := gcPercent
	shard := operator.DefaultOptions()
	shard.SubClusterKey, shard.SubCluster = "example.com/shard", "a"

	t.Setenv("GOGC", "")
	if shardFillsSteady(operator.DefaultOptions(), 50) || percent() != 100 {
		t.Errorf("a whole-cluster replica's fill runs at GC percent %d, want 100", percent())
	}
	if !shardFillsSteady(shard, 50) || percent() != 50 {
		t.Errorf("a shard's fill runs at GC percent %d, want the steady 50", percent())
	}
	debug.SetGCPercent(100)
	if shardFillsSteady(shard, 0) || percent() != 100 {
		t.Errorf("--steady-gogc=0 (keep GOGC): a shard's fill runs at GC percent %d, want 100", percent())
	}
	t.Setenv("GOGC", "200")
	if shardFillsSteady(shard, 50) || percent() != 100 {
		t.Errorf("GOGC set: a shard's fill runs at GC percent %d, want GOGC's (the runtime read it at start)", percent())
	}
}

// gcPercent returns the collector's GC percent, read without setting it (a set and a
// reset would undo a switch another goroutine makes between them).
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
