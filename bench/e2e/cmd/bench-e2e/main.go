// Command bench-e2e is `make bench-e2e`: it starts a real control plane, populates it,
// cold-starts a bare informer, kube-scheduler and multicache (and, with
// -multicache-baseline, another multicache build) in turn, rotating the order every round,
// drives pod churn against multicache, and prints a markdown report with the ratios of
// multicache against the anchors (also written to -out). See package e2e and BENCHMARKS.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seed0f91f25e/multicache/bench/e2e"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// defaults per size: how long a cold start may take, and how long each churn step lasts.
var defaults = map[string]struct {
	timeout, churn time.Duration
}{
	"small":  {2 * time.Minute, 10 * time.Second},
	"medium": {5 * time.Minute, 20 * time.Second},
	"large":  {20 * time.Minute, 30 * time.Second},
}

func main() {
	// The harness's own clients (the list floor, the comparison's reads) log nothing: say so,
	// or controller-runtime prints a warning with a stack in the middle of the report.
	ctrllog.SetLogger(logr.Discard())
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		sizeName    = flag.String("size", "small", "cluster size: small (100 nodes / 3,000 pods), medium (1,000 / 30,000), large (5,000 / 150,000) or NODES/PODS")
		rounds      = flag.Int("rounds", 3, "rounds of cold starts (medians are reported)")
		assets      = flag.String("assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (bin/k8s)")
		repo        = flag.String("repo", "../..", "the main module's directory (CRDs, commit)")
		mcBin       = flag.String("multicache", "", "the multicache binary (go build -o bin/multicache . in the main module)")
		schedBin    = flag.String("kube-scheduler", "", "the kube-scheduler binary (default: kube-scheduler in -assets); the subject is skipped when it is missing")
		dir         = flag.String("dir", "", "directory for logs, kubeconfig and the informer binary (default: a new temporary directory)")
		out         = flag.String("out", "", "also write the markdown report to this file")
		writers     = flag.Int("writers", 16, "parallel writers populating the cluster")
		poll        = flag.Duration("poll", 100*time.Millisecond, "how often a starting subject's metrics are read")
		settle      = flag.Duration("settle", 5*time.Second, "how long a subject runs after it is full before its memory is read")
		cooldown    = flag.Duration("cooldown", 3*time.Second, "pause between two cold starts")
		timeout     = flag.Duration("timeout", 0, "how long a cold start may take (default by size)")
		rates       = flag.String("churn-rates", "60,150,450", "churn steps, writes per second (a third each creates, label updates, deletes); empty skips the churn")
		churnDur    = flag.Duration("churn-duration", 0, "how long each churn step lasts (default by size)")
		churnPoll   = flag.Duration("churn-poll", 10*time.Millisecond, "how often multicache's event counters are read during the churn")
		mcArgs      = flag.String("multicache-args", "", "extra flags of multicache, space-separated (e.g. --verify-period=0)")
		baseline    = flag.String("multicache-baseline", "", "another multicache binary (e.g. the build before a change), cold-started beside -multicache in every round with the same flags and reported as "+e2e.BaselineName)
		churnWorks  = flag.Int("churn-workers", 32, "writers per churn operation")
		mcKinds     = flag.Bool("informer-mc-kinds", true, "also cold-start informer-mc-kinds, a bare informer of every kind multicache watches")
		devices     = flag.Bool("devices", false, "also populate DRA objects (resource.k8s.io/v1): a DeviceClass, a ResourceSlice of -devices-per-node devices per node, -claims-per-node allocated ResourceClaims per node")
		devPerNode  = flag.Int("devices-per-node", e2e.DefaultDevicesPerNode, "devices per node with -devices")
		claimsNode  = flag.Int("claims-per-node", e2e.DefaultClaimsPerNode, "allocated claims per node with -devices (each takes one device of its node)")
		pods        = flag.String("pods", "", "the populated pods: realistic (created by the ReplicaSet controller's field manager, status by the kubelet's: what a running cluster serves) or synthetic (small, no status); default realistic at large, synthetic elsewhere")
		shards      = flag.String("shards", "", fmt.Sprintf("comma-separated splits out of %v (e.g. 4,8): also start a whole-cluster multicache and then the replica of every sub-cluster of each split, each alone (node i is labelled %s=s<i mod k>)", e2e.ShardSplits, "bench.multicache.dev/shard-of-<k>"))
		shardRounds = flag.Int("shard-rounds", 1, "rounds of the shard mode (a whole-cluster replica and every sub-cluster's each round)")
	)
	flag.Parse()
	// The commit is read now, when the Makefile has just built the binaries: the tree may
	// move on during a long run.
	machine := harness.Machine(*repo)
	size, err := e2e.ParseSize(*sizeName)
	if err != nil {
		return err
	}
	if size, err = size.WithPodShape(*pods); err != nil {
		return err
	}
	if *devices {
		if size, err = size.WithDevices(*devPerNode, *claimsNode); err != nil {
			return err
		}
	}
	def, ok := defaults[size.Name]
	if !ok {
		// NODES/PODS: the defaults of the smallest named size with as many pods.
		def = defaults["large"]
		for _, name := range []string{"medium", "small"} {
			if size.Pods <= e2e.Sizes[name].Pods {
				def = defaults[name]
			}
		}
	}
	if *timeout == 0 {
		*timeout = def.timeout
	}
	if *churnDur == 0 {
		*churnDur = def.churn
	}
	splits, err := parseSplits(*shards)
	if err != nil {
		return err
	}
	if *shardRounds < 1 {
		return fmt.Errorf("-shard-rounds: %d, want at least 1", *shardRounds)
	}
	if *assets == "" || *mcBin == "" {
		return fmt.Errorf("-assets (or KUBEBUILDER_ASSETS) and -multicache are required; run it with `make bench-e2e`")
	}
	ctx, stop, err := e2e.StartCommand("bench-e2e", dir)
	if err != nil {
		return err
	}
	defer stop()
	if *schedBin == "" {
		*schedBin = filepath.Join(*assets, "kube-scheduler")
	}
	informerBin := filepath.Join(*dir, "informer")
	if err := harness.GoBuild(".", "./cmd/informer", informerBin); err != nil {
		return err
	}
	mc := e2e.MulticacheSubject(*mcBin, strings.Fields(*mcArgs)...)
	subjects := []e2e.Subject{e2e.InformerSubject(informerBin)}
	if *mcKinds {
		subjects = append(subjects, e2e.MulticacheKindsInformerSubject(informerBin))
	}
	if err := e2e.NeedBinaries([2]string{*schedBin, "kube-scheduler"}); err == nil {
		subjects = append(subjects, e2e.SchedulerFlagsSubject(e2e.StockSchedulerName, *schedBin, 0))
	} else {
		fmt.Fprintf(os.Stderr, "kube-scheduler skipped: %v\n", err)
	}
	subjects = append(subjects, mc)
	if *baseline != "" {
		if err := e2e.NeedBinaries([2]string{*baseline, "build"}); err != nil {
			return fmt.Errorf("-multicache-baseline: %w", err)
		}
		subjects = append(subjects, e2e.BaselineSubject(*baseline, strings.Fields(*mcArgs)...))
	}

	var steps []e2e.ChurnStep
	for _, r := range strings.Split(*rates, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("-churn-rates: bad rate %q", r)
		}
		steps = append(steps, e2e.ChurnStep{Rate: v, Duration: *churnDur})
	}

	res, err := e2e.Run(ctx, e2e.Config{
		Size: size, Rounds: *rounds, Subjects: subjects, Multicache: mc, ChurnInformer: e2e.InformerSubject(informerBin),
		Assets: *assets, RepoRoot: *repo, Dir: *dir, Writers: *writers,
		Timing:   e2e.Timing{Poll: *poll, Timeout: *timeout, Settle: *settle},
		Cooldown: *cooldown,
		Shards:   splits, ShardRounds: *shardRounds,
		ShardSubject: func(key, shard string) e2e.Subject {
			return e2e.MulticacheSubject(*mcBin, append(strings.Fields(*mcArgs), "--sub-cluster-key="+key, "--sub-cluster="+shard)...)
		},
		Churn: e2e.Churn{Steps: steps, Workers: *churnWorks, Poll: *churnPoll, DrainTimeout: time.Minute, Pause: 2 * time.Second},
		Log:   e2e.NewElapsedWriter(os.Stderr),
	})
	if res == nil || res.Population == nil {
		return err
	}
	var b strings.Builder
	e2e.WriteReport(&b, res, machine)
	if err := e2e.EmitReport("bench-e2e", b.String(), err, *out); err != nil {
		return err
	}
	if problems := res.Problems(); len(problems) > 0 {
		return fmt.Errorf("correctness: %s", strings.Join(problems, "; "))
	}
	return nil
}

// parseSplits reads -shards: comma-separated splits, each one the nodes are labelled for.
func parseSplits(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("-shards: %q is not a number of sub-clusters", f)
		}
		if err := e2e.ValidShardSplit(k); err != nil {
			return nil, fmt.Errorf("-shards: %w", err)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}
