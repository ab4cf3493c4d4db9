package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// WholeMem and ShardMem are where each replica's resident memory went when settled.
	WholeMem MemSplit
	ShardMem []MemSplit
}

// runShards measures the whole-cluster replica, then the replicas of the first n shards.
func runShards(ctx context.Context, cfg Config, env Env, log io.Writer) (*ShardRun, error) {
	run := &ShardRun{}
	time.Sleep(cfg.Cooldown)
	whole, mem, err := measureReplica(ctx, cfg.Multicache, env, cfg.Timing, filepath.Join(cfg.Dir, "multicache-whole.log"), nil)
	if err != nil {
		return run, err
	}
	whole.Subject = "multicache (whole cluster)"
	logColdStart(log, whole)
	run.Whole, run.WholeMem = whole, mem
	for s := range cfg.Shards {
		time.Sleep(cfg.Cooldown)
		senv := env
		senv.Want = ShardWant(cfg.Size, s)
		sub := cfg.ShardSubject(ShardOf(s))
		cs, mem, err := measureReplica(ctx, sub, senv, cfg.Timing, filepath.Join(cfg.Dir, sub.Name+".log"), compareEmpty)
		if err != nil {
			return run, err
		}
		logColdStart(log, cs)
		run.Shards = append(run.Shards, cs)
		run.ShardMem = append(run.ShardMem, mem)
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
	if len(r.ShardMem) != len(r.Shards) {
		return
	}
	fmt.Fprint(w, "\nWhere the settled RSS goes (read just before it, from /proc/<pid>/status and runtime.MemStats):\n\n")
	fmt.Fprintln(w, "| replica | RSS | file-backed (binary) | anonymous | heap in use | heap free, not returned | stacks | runtime metadata | heap goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	split := func(name string, m MemSplit) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, mib(m.RSSAnon+m.RSSFile), mib(m.RSSFile), mib(m.RSSAnon),
			mib(m.HeapInuse), mib(m.HeapRetained), mib(m.Stacks), mib(m.Runtime), mib(m.NextGC))
	}
	split(r.Whole.Subject, r.WholeMem)
	for s, c := range r.Shards {
		split(c.Subject, r.ShardMem[s])
	}
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
	body, err := get(ctx, in.PprofURL+"/heap?debug=1")
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
