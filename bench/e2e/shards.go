package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
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
	for i := range size.Nodes {
		w.Nodes += btoi(i%k == s)
	}
	if size.Nodes == 0 {
		return w
	}
	for i := range size.Pods {
		w.Pods += btoi(i%size.Nodes%k == s)
	}
	return w
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ShardRun is the shard mode's measurement, round after round: a whole-cluster replica,
// then the replica of every sub-cluster of each split, each started alone on the same
// cluster.
type ShardRun struct {
	// Wholes and WholeMem: the whole-cluster replica in each round, and where its
	// resident memory went when settled.
	Wholes   []ColdStart
	WholeMem []MemSplit
	Splits   []SplitRun
}

// SplitRun is one split's replicas: Shards[round][s] is sub-cluster s's cold start in that
// round, Mem[round][s] where its memory went.
type SplitRun struct {
	K      int
	Shards [][]ColdStart
	Mem    [][]MemSplit
}

// runShards measures, cfg.ShardRounds times, the whole-cluster replica and then the
// replicas of every sub-cluster of each split in cfg.Shards.
func runShards(ctx context.Context, cfg Config, env Env, log io.Writer) (*ShardRun, error) {
	run := &ShardRun{}
	for _, k := range cfg.Shards {
		run.Splits = append(run.Splits, SplitRun{K: k})
	}
	for round := range max(1, cfg.ShardRounds) {
		time.Sleep(cfg.Cooldown)
		whole, mem, err := measureReplica(ctx, cfg.Multicache, env, cfg.Timing, filepath.Join(cfg.Dir, fmt.Sprintf("multicache-whole-%d.log", round)), nil)
		if err != nil {
			return run, err
		}
		whole.Subject, whole.Round = "multicache (whole cluster)", round
		logColdStart(log, whole)
		run.Wholes, run.WholeMem = append(run.Wholes, whole), append(run.WholeMem, mem)
		for i := range run.Splits {
			sp := &run.Splits[i]
			var starts []ColdStart
			var mems []MemSplit
			for s := range sp.K {
				time.Sleep(cfg.Cooldown)
				senv := env
				senv.Want = ShardWant(cfg.Size, sp.K, s)
				sub := cfg.ShardSubject(ShardLabel(sp.K), ShardOf(s, sp.K))
				sub.Name = fmt.Sprintf("multicache-shard-%d-of-%d", s, sp.K)
				cs, mem, err := measureReplica(ctx, sub, senv, cfg.Timing, filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d.log", sub.Name, round)), compareEmpty)
				if err != nil {
					return run, err
				}
				cs.Round = round
				logColdStart(log, cs)
				starts, mems = append(starts, cs), append(mems, mem)
			}
			sp.Shards, sp.Mem = append(sp.Shards, starts), append(sp.Mem, mems)
		}
	}
	return run, nil
}

// measureReplica is MeasureColdStart with the memory split read when settled, right
// before the settled RSS (and before Settle's forced collection).
func measureReplica(ctx context.Context, s Subject, env Env, timing Timing, logPath string,
	check func(context.Context, *Instance) error) (ColdStart, MemSplit, error) {
	in, err := s.Start(env, logPath)
	if err != nil {
		return ColdStart{}, MemSplit{}, err
	}
	defer in.Stop(10 * time.Second)
	cs, err := Watch(ctx, in, env.Want, timing, logPath)
	if err != nil {
		return ColdStart{}, MemSplit{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	cs.Subject, cs.Round = s.Name, -1
	select {
	case <-ctx.Done():
		return cs, MemSplit{}, ctx.Err()
	case <-time.After(timing.Settle):
	}
	mem, err := ReadMemSplit(ctx, in)
	if err != nil {
		return cs, mem, fmt.Errorf("%s: %w", s.Name, err)
	}
	now := timing
	now.Settle = 0
	if err := Settle(ctx, in, now, &cs); err != nil {
		return cs, mem, fmt.Errorf("%s: %w", s.Name, err)
	}
	if check != nil {
		if err := check(ctx, in); err != nil {
			return cs, mem, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return cs, mem, nil
}

// compareEmpty fails unless the replica's /debug/cache/compare is empty.
func compareEmpty(ctx context.Context, in *Instance) error {
	body, err := harness.Get(ctx, DebugURL(in)+"/debug/cache/compare", 5*time.Minute)
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

// writeShards renders the shard mode's tables: per split, each replica's medians over the
// rounds against the whole replica's, every start, and where the memory of the last round's
// replicas went.
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
		fmt.Fprintf(w, "- whole: %s\n", startsList(whole))
		for s := range sp.K {
			fmt.Fprintf(w, "- s%d: %s\n", s, startsList(column(sp.Shards, s)))
		}
	}
	if len(r.Splits) == 0 || len(r.WholeMem) == 0 {
		return
	}
	last := len(r.WholeMem) - 1
	fmt.Fprint(w, "\nWhere the settled RSS goes in the last round (read just before it, from /proc/<pid>/status and runtime.MemStats):\n\n")
	fmt.Fprintln(w, "| replica | RSS | file-backed (binary) | anonymous | heap in use | heap free, not returned | stacks | runtime metadata | heap goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	split := func(name string, m MemSplit) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, mib(m.RSSAnon+m.RSSFile), mib(m.RSSFile), mib(m.RSSAnon),
			mib(m.HeapInuse), mib(m.HeapRetained), mib(m.Stacks), mib(m.Runtime), mib(m.NextGC))
	}
	split(whole[last].Subject, r.WholeMem[last])
	for _, sp := range r.Splits {
		if last < len(sp.Mem) && last < len(sp.Shards) {
			for s, m := range sp.Mem[last] {
				split(sp.Shards[last][s].Subject, m)
			}
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

// MemSplit is where a process's resident memory goes: the kernel's file-backed and
// anonymous pages, and the Go runtime's own accounts of the anonymous part.
type MemSplit struct {
	// RSSFile (mostly the binary's text and data) and RSSAnon, from /proc/<pid>/status.
	RSSFile, RSSAnon int64
	// HeapInuse: spans holding objects, live or not yet collected. HeapRetained: free spans
	// not returned to the OS (HeapIdle - HeapReleased). Stacks: StackInuse.
	HeapInuse, HeapRetained, Stacks int64
	// Runtime is the runtime's metadata: span and mcache structures, GC metadata, profiling
	// buckets and the rest (MSpanSys + MCacheSys + BuckHashSys + GCSys + OtherSys).
	Runtime int64
	// NextGC is the heap size at which the next collection starts.
	NextGC int64
}

// ReadMemSplit reads in's MemSplit now, without a collection (the runtime.MemStats that
// /debug/pprof/heap?debug=1 prints).
func ReadMemSplit(ctx context.Context, in *Instance) (MemSplit, error) {
	var m MemSplit
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", in.Pid()))
	if err != nil {
		return m, err
	}
	kb := func(key string) int64 {
		for _, line := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == key {
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				return n << 10
			}
		}
		return 0
	}
	m.RSSFile, m.RSSAnon = kb("RssFile"), kb("RssAnon")
	body, err := harness.Get(ctx, in.PprofURL+"/heap?debug=1", harness.RequestTimeout)
	if err != nil {
		return m, err
	}
	if err := m.parseMemStats(body); err != nil {
		return m, fmt.Errorf("%s/heap?debug=1: %w", in.PprofURL, err)
	}
	return m, nil
}

// parseMemStats fills m's Go runtime figures from a heap profile in text (debug=1), which
// ends with runtime.MemStats as "# Name = value" or "# Name = inuse / sys" lines.
func (m *MemSplit) parseMemStats(body []byte) error {
	stats := map[string][2]int64{}
	for _, line := range strings.Split(string(body), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok || !strings.HasPrefix(line, "# ") {
			continue
		}
		var pair [2]int64
		for i, f := range strings.SplitN(v, " / ", 2) {
			pair[i], _ = strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		}
		stats[k] = pair
	}
	if _, ok := stats["HeapInuse"]; !ok {
		return fmt.Errorf("no runtime.MemStats")
	}
	m.HeapInuse = stats["HeapInuse"][0]
	m.HeapRetained = stats["HeapIdle"][0] - stats["HeapReleased"][0]
	m.Stacks = stats["Stack"][0]
	m.Runtime = stats["MSpan"][1] + stats["MCache"][1] + stats["BuckHashSys"][0] + stats["GCSys"][0] + stats["OtherSys"][0]
	m.NextGC = stats["NextGC"][0]
	return nil
}
