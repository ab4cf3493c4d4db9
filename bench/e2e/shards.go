package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// LabelShard puts every node into one of the bench's sub-clusters (ShardOf); only the shard
// mode (-shards) runs replicas selecting them.
const LabelShard = "bench.multicache.dev/shard"

// MaxShards is how many sub-clusters the nodes are labelled into (node i into s<i mod 4>).
const MaxShards = 4

// ShardOf is the sub-cluster of node i.
func ShardOf(i int) string { return fmt.Sprintf("s%d", i%MaxShards) }

// ShardWant is what the replica of shard s (0 ≤ s < MaxShards) holds when full: the nodes
// i ≡ s (mod 4) and the pods on them (pod i is on node i mod Nodes; every size's node count
// is a multiple of 4, so pod i is in shard i mod 4).
func ShardWant(size Size, s int) Want {
	count := func(n int) int { return n/MaxShards + btoi(s < n%MaxShards) }
	return Want{Nodes: count(size.Nodes), Pods: count(size.Pods)}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ShardRun is the shard mode's measurement: one whole-cluster replica and then each shard's
// replica, started alone one after the other on the same cluster.
type ShardRun struct {
	Whole  ColdStart
	Shards []ColdStart
}

// runShards measures the whole-cluster replica, then the replicas of the first n shards.
func runShards(ctx context.Context, cfg Config, env Env, log io.Writer) (*ShardRun, error) {
	run := &ShardRun{}
	time.Sleep(cfg.Cooldown)
	whole, err := MeasureColdStart(ctx, cfg.Multicache, env, -1, cfg.Timing, filepath.Join(cfg.Dir, "multicache-whole.log"), nil)
	if err != nil {
		return run, err
	}
	whole.Subject = "multicache (whole cluster)"
	logColdStart(log, whole)
	run.Whole = whole
	for s := range cfg.Shards {
		time.Sleep(cfg.Cooldown)
		senv := env
		senv.Want = ShardWant(cfg.Size, s)
		sub := cfg.ShardSubject(ShardOf(s))
		cs, err := MeasureColdStart(ctx, sub, senv, -1, cfg.Timing, filepath.Join(cfg.Dir, sub.Name+".log"), compareEmpty)
		if err != nil {
			return run, err
		}
		cs.Subject = sub.Name
		logColdStart(log, cs)
		run.Shards = append(run.Shards, cs)
	}
	return run, nil
}

// compareEmpty fails unless the replica's /debug/cache/compare is empty.
func compareEmpty(ctx context.Context, in *Instance) error {
	body, err := getSlow(ctx, DebugURL(in)+"/debug/cache/compare", 5*time.Minute)
	if err != nil {
		return err
	}
	var diffs []json.RawMessage
	if err := json.Unmarshal(body, &diffs); err != nil {
		return fmt.Errorf("/debug/cache/compare: %w: %.200s", err, body)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("/debug/cache/compare: %d differences, e.g. %s", len(diffs), diffs[0])
	}
	return nil
}

// writeShards renders the shard mode's table.
func writeShards(w io.Writer, res *Result) {
	r := res.ShardRun
	if r == nil || r.Whole.Full == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Shards (%d of %d sub-clusters, each replica started alone)\n\n", len(r.Shards), MaxShards)
	fmt.Fprintln(w, "| replica | nodes / pods | time to full | CPU | settled RSS | peak RSS | heap after GC | full / whole | settled RSS / whole | peak RSS / whole |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	row := func(name string, want Want, c ColdStart) {
		fmt.Fprintf(w, "| %s | %d / %d | %.0f ms | %.0f ms | %s | %s | %s | %.2fx | %.2fx | %.2fx |\n", name, want.Nodes, want.Pods,
			msf(c.Full), msf(c.CPU), mib(c.SettledRSS), mib(c.PeakRSS), mib(c.HeapAfterGC),
			float64(c.Full)/float64(r.Whole.Full), float64(c.SettledRSS)/float64(r.Whole.SettledRSS), float64(c.PeakRSS)/float64(r.Whole.PeakRSS))
	}
	row(r.Whole.Subject, Want{Nodes: res.Config.Size.Nodes, Pods: res.Config.Size.Pods}, r.Whole)
	for s, c := range r.Shards {
		row(c.Subject, ShardWant(res.Config.Size, s), c)
	}
}
