package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Config is one run of the harness.
type Config struct {
	Size Size
	// Rounds of cold starts; the subjects' order rotates every round.
	Rounds int
	// Subjects to cold-start (InformerSubject, SchedulerFlagsSubject, MulticacheSubject); the
	// multicache one is also the subject of the churn.
	Subjects []Subject
	// Multicache is the subject the churn runs against (usually also in Subjects).
	Multicache Subject
	// ChurnInformer runs alongside multicache during the churn (InformerSubject), its pod
	// event counters read as multicache's are: the informer's own lag at the same rate,
	// measured the same way.
	ChurnInformer Subject
	// Assets holds kube-apiserver and etcd; RepoRoot is the main module (for its CRDs).
	Assets, RepoRoot string
	// Dir receives the logs, the kubeconfig and the subjects' configuration.
	Dir string
	// Writers is the number of parallel writers that populate the cluster.
	Writers int
	// Timing of every cold start.
	Timing Timing
	// Cooldown between two cold starts (the API server finishes the previous one's watches).
	Cooldown time.Duration
	// Churn steps against multicache; none skips the churn.
	Churn Churn
	// Shards, when not empty (each one of ShardSplits), measures after the rounds a
	// whole-cluster replica and then the replicas of every sub-cluster of each split
	// (ShardSubject), each alone, ShardRounds times (at least once).
	Shards      []int
	ShardRounds int
	// ShardSubject is the multicache replica of one sub-cluster (--sub-cluster-key=key
	// --sub-cluster=shard).
	ShardSubject func(key, shard string) Subject
	// Log receives progress.
	Log io.Writer
}

// Result is everything one run measured.
type Result struct {
	Config     Config
	Started    time.Time
	Population *Population
	// PodSizes is what a sample of the populated pods weighs as the API server serves them.
	PodSizes PodSizes
	// WarmUp is multicache's first start on the new cluster (it writes the initial status
	// of PodGroups and Reservations; not a sample).
	WarmUp     ColdStart
	ColdStarts []ColdStart
	// StoreCheck lists multicache's store counts that differ from the population (empty
	// when every store holds what was written), after each of its cold starts and after the
	// churn (which deletes every pod it creates).
	StoreCheck []string
	Churn      *ChurnReport
	// AfterChurn is multicache's memory after the churn (Full and CPU unused).
	AfterChurn ColdStart
	// VerifyRuns and VerifySeconds are how often multicache's verify loop ran during the
	// churn's process, and how long it took in all (multicache_verify_duration_seconds).
	VerifyRuns    int
	VerifySeconds float64
	// VerifyRechecks counts, by result (cleared, confirmed), the invariant checks whose
	// parts found something and that ran again under one hold of the lock, events waiting
	// (multicache_invariant_rechecks_total).
	VerifyRechecks map[string]int
	// Compare is multicache's /debug/cache/compare after the churn: the differences between
	// its cache and the API (none expected).
	Compare []json.RawMessage
	// CompareCost is what that one GET of /debug/cache/compare cost multicache.
	CompareCost EndpointCost
	// CompareFloor is the list floor (ListFloor), measured just before and just after the
	// comparison.
	CompareFloor []time.Duration
	// ShardRun is the shard mode's measurement (nil without -shards).
	ShardRun *ShardRun
	// Duration of the whole run.
	Duration time.Duration
}

// podSizeSample is how many pods MeasurePodSizes reads.
const podSizeSample = 200

// Run starts a cluster, populates it, measures the cold starts and the churn, and stops
// the cluster. When a step fails after the population, it returns what was measured until
// then with the error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	res := &Result{Config: cfg, Started: time.Now()}
	log := cfg.Log
	cl, err := startCluster(cfg.Assets, cfg.RepoRoot, cfg.Dir, log)
	if err != nil {
		return nil, err
	}
	defer stopCluster(cl, log)

	fmt.Fprintf(log, "populating %s with %d writers\n", cfg.Size, cfg.Writers)
	if res.Population, err = Populate(ctx, cl.Client, cfg.Size, cfg.Writers, log); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "populated %d objects in %.1fs\n", res.Population.Objects, res.Population.Duration.Seconds())
	if res.PodSizes, err = MeasurePodSizes(ctx, cl.Config, cfg.Size.Pods, podSizeSample); err != nil {
		return res, fmt.Errorf("measuring the served size of pods: %w", err)
	}
	fmt.Fprintf(log, "a %s pod served: %s\n", cfg.Size.PodShape(), res.PodSizes)

	env := Env{Kubeconfig: cl.Kubeconfig, Dir: cfg.Dir, Want: Want{Nodes: cfg.Size.Nodes, Pods: cfg.Size.Pods}}
	if env.API, err = NewAPIServer(cl.Config); err != nil {
		return res, fmt.Errorf("reading the API server's costs: %w", err)
	}
	checkStores := func(ctx context.Context, in *Instance) error {
		diffs, err := CheckStores(ctx, in, cfg.Size)
		res.StoreCheck = append(res.StoreCheck, diffs...)
		return err
	}
	// multicache writes the status of every PodGroup and Reservation on its first start;
	// later starts find them written. The warm-up keeps that one-off cost out of the samples.
	fmt.Fprintf(log, "warm-up: multicache writes the initial statuses\n")
	idle := env.API.Pause(cfg.Cooldown)
	if res.WarmUp, err = MeasureColdStart(ctx, cfg.Multicache, env, -1, cfg.Timing, filepath.Join(cfg.Dir, "multicache-warmup.log"), checkStores); err != nil {
		return res, err
	}
	if res.WarmUp.API != nil {
		res.WarmUp.API.IdleCores = idle
	}
	logColdStart(log, res.WarmUp)

	// The baseline's statuses are the same objects; its own warm-up keeps any status it
	// writes differently out of its samples too.
	for _, s := range cfg.Subjects {
		if s.Name == BaselineName {
			cs, err := MeasureColdStart(ctx, s, env, -1, cfg.Timing, filepath.Join(cfg.Dir, s.Name+"-warmup.log"), nil)
			if err != nil {
				return res, err
			}
			logColdStart(log, cs)
		}
	}

	for round := range cfg.Rounds {
		order := make([]Subject, len(cfg.Subjects))
		for i := range order {
			order[i] = cfg.Subjects[(i+round)%len(cfg.Subjects)]
		}
		alternate(order, round, cfg.Multicache.Name, BaselineName)
		for _, s := range order {
			// The cooldown also measures the API server's idle CPU (NetAPIServerCPU).
			idle := env.API.Pause(cfg.Cooldown)
			var check func(context.Context, *Instance) error
			if s.Name == cfg.Multicache.Name {
				check = checkStores
			}
			cs, err := MeasureColdStart(ctx, s, env, round, cfg.Timing, filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d.log", s.Name, round)), check)
			if err != nil {
				return res, err
			}
			if cs.API != nil {
				cs.API.IdleCores = idle
			}
			logColdStart(log, cs)
			res.ColdStarts = append(res.ColdStarts, cs)
		}
	}
	if len(cfg.Shards) > 0 {
		fmt.Fprintf(log, "shards: %d round(s) of a whole-cluster replica, then the replicas of %v sub-clusters\n", max(1, cfg.ShardRounds), cfg.Shards)
		res.ShardRun, err = runShards(ctx, cfg, env, log)
		if err != nil {
			return res, err
		}
	}

	if len(cfg.Churn.Steps) > 0 {
		if err := runChurn(ctx, cfg, cl, env, res); err != nil {
			return res, err
		}
	}
	res.Duration = time.Since(res.Started)
	return res, nil
}

// startCluster starts the control plane in dir (harness.StartCluster), its clients not
// throttled: the harness is the only writer.
func startCluster(assets, repoRoot, dir string, log io.Writer) (*harness.Cluster, error) {
	fmt.Fprintf(log, "starting kube-apiserver and etcd from %s\n", assets)
	return harness.StartCluster(harness.ClusterOptions{RepoRoot: repoRoot, Assets: assets, Dir: dir, QPS: 1e6})
}

// stopCluster stops cl, saying so in log when it fails (a run's figures stand either way).
func stopCluster(cl *harness.Cluster, log io.Writer) {
	if err := cl.Stop(); err != nil {
		fmt.Fprintf(log, "stopping the control plane: %v\n", err)
	}
}

// runChurn starts multicache once more, drives the churn against it, then reads its memory
// and its comparison with the API.
func runChurn(ctx context.Context, cfg Config, cl *harness.Cluster, env Env, res *Result) error {
	log := cfg.Log
	time.Sleep(cfg.Cooldown)
	logPath := filepath.Join(cfg.Dir, "multicache-churn.log")
	in, err := cfg.Multicache.Start(env, logPath)
	if err != nil {
		return err
	}
	defer in.Stop(10 * time.Second)
	if _, err := Watch(ctx, in, env.Want, cfg.Timing, logPath); err != nil {
		return fmt.Errorf("multicache for the churn: %w", err)
	}
	infLog := filepath.Join(cfg.Dir, cfg.ChurnInformer.Name+"-churn.log")
	inf, err := cfg.ChurnInformer.Start(env, infLog)
	if err != nil {
		return err
	}
	defer inf.Stop(10 * time.Second)
	if _, err := Watch(ctx, inf, env.Want, cfg.Timing, infLog); err != nil {
		return fmt.Errorf("%s for the churn: %w", cfg.ChurnInformer.Name, err)
	}
	fmt.Fprintf(log, "churn alongside %s (pid %d), read alike\n", cfg.ChurnInformer.Name, inf.Pid())
	fmt.Fprintf(log, "churn against multicache (pid %d)\n", in.Pid())
	// multicache's memory after the churn is read before the debug endpoints are (their
	// answers are tens of megabytes of garbage).
	res.AfterChurn.Subject, res.AfterChurn.Round = cfg.Multicache.Name+"-after-churn", -1
	settle := func() error { return Settle(ctx, in, cfg.Timing, &res.AfterChurn) }
	res.Churn, err = cfg.Churn.Run(ctx, cl, cfg.Size, res.Population.ReplicaSetUIDs[1], in, inf, log, settle)
	if err != nil {
		return err
	}
	const rechecks = "multicache_invariant_rechecks_total"
	m, err := harness.Scrape(ctx, harness.FilterURL(in.MetricsURL, "multicache_verify_duration_seconds", rechecks),
		"multicache_verify_duration_seconds", rechecks)
	if err != nil {
		return err
	}
	res.VerifyRuns = count(m, "multicache_verify_duration_seconds_count")
	res.VerifySeconds = m["multicache_verify_duration_seconds_sum"]
	res.VerifyRechecks = map[string]int{}
	for _, result := range []string{"cleared", "confirmed"} {
		res.VerifyRechecks[result] = count(m, rechecks+`{result="`+result+`"}`)
	}
	diffs, err := CheckStores(ctx, in, cfg.Size)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		res.StoreCheck = append(res.StoreCheck, "after the churn: "+d)
	}
	fmt.Fprintf(log, "after churn: the verify loop ran %d times, %.2fs in all (checks run again under one hold: %d cleared, %d confirmed); reading /debug/cache/compare\n",
		res.VerifyRuns, res.VerifySeconds, res.VerifyRechecks["cleared"], res.VerifyRechecks["confirmed"])
	floor := func() error {
		took, objects, err := ListFloor(ctx, cl.Config)
		if err != nil {
			return fmt.Errorf("the list floor: %w", err)
		}
		res.CompareFloor = append(res.CompareFloor, took)
		fmt.Fprintf(log, "  list floor (the comparison's lists, bare client): %.2fs for %d objects\n", took.Seconds(), objects)
		return nil
	}
	if err := floor(); err != nil {
		return err
	}
	var body []byte
	res.CompareCost, body, err = MeasureEndpoint(ctx, in, "/debug/cache/compare", 10*time.Minute)
	if err != nil {
		return err
	}
	logEndpoint(log, res.CompareCost)
	if err := floor(); err != nil {
		return err
	}
	if res.Compare, err = readCompare(ctx, in, body); err != nil {
		return err
	}
	fmt.Fprintf(log, "after churn: RSS %s, heap after GC %s, /debug/cache/compare: %d differences\n",
		mib(res.AfterChurn.SettledRSS), mib(res.AfterChurn.HeapAfterGC), len(res.Compare))
	return nil
}

func logColdStart(log io.Writer, cs ColdStart) {
	api := ""
	if cs.API != nil {
		api = fmt.Sprintf("  apiserver cpu %5.2fs (net of idle %5.2fs)  etcd cpu %5.2fs", cs.API.APIServerCPU.Seconds(),
			cs.API.NetAPIServerCPU().Seconds(), cs.API.EtcdCPU.Seconds())
	}
	fmt.Fprintf(log, "  round %2d %-17s full %6.2fs  cpu %6.2fs  rss@full %s  peak %s  settled %s  heap %s%s  (%s)\n",
		cs.Round, cs.Subject, cs.Full.Seconds(), cs.CPU.Seconds(), mib(cs.RSSAtFull), mib(cs.PeakRSS), mib(cs.SettledRSS),
		mib(cs.HeapAfterGC), api, cs.Detail)
}

// mib formats bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func mibf(b int64) float64 { return float64(b) / (1 << 20) }

// Problems lists what makes the run incorrect, whatever its speed: a store of multicache
// that does not hold the population, a churn write multicache never showed or rejected, a
// failed write, differences between multicache and the API after the churn.
func (r *Result) Problems() []string {
	var p []string
	if len(r.StoreCheck) > 0 {
		p = append(p, "multicache's stores: "+strings.Join(r.StoreCheck, ", "))
	}
	if r.Churn == nil {
		return p
	}
	phases := r.Churn.Phases
	if r.Churn.DuringDump != nil {
		phases = append(slices.Clone(phases), *r.Churn.DuringDump)
	}
	for _, c := range phases {
		if c.Missing > 0 || c.Rejected > 0 || c.Errors > 0 || c.Applied != c.Writes {
			p = append(p, fmt.Sprintf("churn at %.0f/s, %s: %d writes, %d events applied, %d writes never shown, %d events rejected, %d writes failed",
				c.Step.Rate, opNames[c.Op], c.Writes, c.Applied, c.Missing, c.Rejected, c.Errors))
		}
	}
	if len(r.Config.Churn.Steps) > 0 && len(r.Compare) > 0 {
		p = append(p, fmt.Sprintf("/debug/cache/compare after the churn: %d differences, e.g. %s", len(r.Compare), r.Compare[0]))
	}
	return p
}

// alternate puts subject a before b in even rounds and after it in odd ones (swapping their
// places in order): the rotation alone keeps neighbours in one order most rounds, so the
// second would mostly start right after the first (and its store check, a list of the
// whole cluster).
func alternate(order []Subject, round int, a, b string) {
	i := slices.IndexFunc(order, func(s Subject) bool { return s.Name == a })
	j := slices.IndexFunc(order, func(s Subject) bool { return s.Name == b })
	if i >= 0 && j >= 0 && (i < j) != (round%2 == 0) {
		order[i], order[j] = order[j], order[i]
	}
}
