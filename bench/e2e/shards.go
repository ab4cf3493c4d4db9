package e2e

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ShardSplits are the ways the bench's nodes are split into sub-clusters: for each k, node
// i is labelled ShardLabel(k)=ShardOf(i, k). Only the shard mode (-shards) runs replicas
// selecting them.
var ShardSplits = []int{4, 8}

// ShardLabel is the node label of the split into k sub-clusters.
func ShardLabel(k int) string { return fmt.Sprintf("bench.multicache.dev/shard-of-%d", k) }

// ShardOf is the sub-cluster of node i when the nodes are split k ways.
func ShardOf(i, k int) string { return fmt.Sprintf("s%d", i%k) }

// ValidShardSplit says why k is not a split the nodes are labelled for (nil when it is).
func ValidShardSplit(k int) error {
	if !slices.Contains(ShardSplits, k) {
		return fmt.Errorf("%d sub-clusters: the nodes are labelled for %v only", k, ShardSplits)
	}
	return nil
}

// ShardWant is what the replica of sub-cluster s of split k holds when full: the nodes
// i ≡ s (mod k) and the pods bound to them (pod i is on node i mod Nodes).
func ShardWant(size Size, k, s int) Want {
	var w Want
	for n := s; n < size.Nodes; n += k {
		// Node n holds Pods/Nodes pods, one more when n < Pods mod Nodes.
		w.Nodes++
		w.Pods += size.Pods / size.Nodes
		if n < size.Pods%size.Nodes {
			w.Pods++
		}
	}
	return w
}

// ShardRun is the shard mode's measurement, round after round: a whole-cluster replica,
// then the replica of every sub-cluster of each split, each started alone on the same
// cluster.
type ShardRun struct {
	// Wholes is the whole-cluster replica in each round.
	Wholes []ColdStart
	Splits []SplitRun
}

// SplitRun is one split's replicas: Shards[round][s] is sub-cluster s's cold start in that
// round.
type SplitRun struct {
	K      int
	Shards [][]ColdStart
}

// runShards measures, cfg.ShardRounds times, the whole-cluster replica and then the
// replicas of every sub-cluster of each split in cfg.Shards. The API server's costs are not
// read (the report has none for replicas).
func runShards(ctx context.Context, cfg Config, env Env, log io.Writer) (*ShardRun, error) {
	env.API = nil
	run := &ShardRun{}
	for _, k := range cfg.Shards {
		run.Splits = append(run.Splits, SplitRun{K: k})
	}
	for round := range max(1, cfg.ShardRounds) {
		time.Sleep(cfg.Cooldown)
		whole, err := MeasureColdStart(ctx, cfg.Multicache, env, round, cfg.Timing, filepath.Join(cfg.Dir, fmt.Sprintf("multicache-whole-%d.log", round)), nil)
		if err != nil {
			return run, err
		}
		whole.Subject = "multicache (whole cluster)"
		logColdStart(log, whole)
		run.Wholes = append(run.Wholes, whole)
		for i := range run.Splits {
			sp := &run.Splits[i]
			var starts []ColdStart
			for s := range sp.K {
				time.Sleep(cfg.Cooldown)
				senv := env
				senv.Want = ShardWant(cfg.Size, sp.K, s)
				sub := cfg.ShardSubject(ShardLabel(sp.K), ShardOf(s, sp.K))
				sub.Name = fmt.Sprintf("multicache-shard-%d-of-%d", s, sp.K)
				cs, err := MeasureColdStart(ctx, sub, senv, round, cfg.Timing, filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d.log", sub.Name, round)), compareEmpty)
				if err != nil {
					return run, err
				}
				logColdStart(log, cs)
				starts = append(starts, cs)
			}
			sp.Shards = append(sp.Shards, starts)
		}
	}
	return run, nil
}

// compareEmpty fails unless the replica's /debug/cache/compare is empty.
func compareEmpty(ctx context.Context, in *Instance) error {
	diffs, err := readCompare(ctx, in, nil)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("/debug/cache/compare: %d differences, e.g. %s", len(diffs), diffs[0])
	}
	return nil
}

// writeShards renders the shard mode: every start of the whole replica, then per split
// each replica's medians over the rounds against the whole replica's, and every start.
func writeShards(w io.Writer, res *Result) {
	r := res.ShardRun
	if r == nil || len(r.Wholes) == 0 {
		return
	}
	full := func(c ColdStart) time.Duration { return c.Full }
	cpu := func(c ColdStart) time.Duration { return c.CPU }
	settled := func(c ColdStart) int64 { return c.SettledRSS }
	peak := func(c ColdStart) int64 { return c.PeakRSS }
	heap := func(c ColdStart) int64 { return c.HeapAfterGC }
	whole := r.Wholes
	size := res.Config.Size
	fmt.Fprintf(w, "\n### Shards\n\n%s, every start (time to full / settled RSS): %s.\n", whole[0].Subject, startsList(whole))
	for _, sp := range r.Splits {
		if len(sp.Shards) == 0 || len(sp.Shards[0]) < sp.K {
			continue // the run stopped before this split's first round was whole
		}
		fmt.Fprintf(w, "\n### Shards: %d sub-clusters, each replica started alone (%d round(s), medians)\n\n", sp.K, len(sp.Shards))
		fmt.Fprintln(w, "| replica | nodes / pods | time to full | CPU | settled RSS | peak RSS | heap after GC | full / whole | settled RSS / whole | peak RSS / whole |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		row := func(name string, want Want, cs []ColdStart) {
			fmt.Fprintf(w, "| %s | %d / %d | %.0f ms | %.0f ms | %s | %s | %s | %.2fx | %.2fx | %.2fx |\n", name, want.Nodes, want.Pods,
				msf(median(cs, full)), msf(median(cs, cpu)), mib(median(cs, settled)), mib(median(cs, peak)), mib(median(cs, heap)),
				float64(median(cs, full))/float64(median(whole, full)), float64(median(cs, settled))/float64(median(whole, settled)),
				float64(median(cs, peak))/float64(median(whole, peak)))
		}
		row(whole[0].Subject, Want{Nodes: size.Nodes, Pods: size.Pods}, whole)
		for s := range sp.K {
			row(sp.Shards[0][s].Subject, ShardWant(size, sp.K, s), column(sp.Shards, s))
		}
		fmt.Fprint(w, "\nEvery start, time to full / settled RSS:\n\n")
		for s := range sp.K {
			fmt.Fprintf(w, "- s%d: %s\n", s, startsList(column(sp.Shards, s)))
		}
	}
}

// column is sub-cluster s's cold start in every round.
func column(rounds [][]ColdStart, s int) []ColdStart {
	var out []ColdStart
	for _, r := range rounds {
		if s < len(r) {
			out = append(out, r[s])
		}
	}
	return out
}

// startsList is "time to full / settled RSS" of each start, in round order.
func startsList(cs []ColdStart) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%.2f s / %s", c.Full.Seconds(), mib(c.SettledRSS))
	}
	return strings.Join(parts, ", ")
}
