package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// SchedBenchConfig is one run of bench-scheduler: schedulers compared on the same cluster,
// each placing the same pending pods.
type SchedBenchConfig struct {
	// Assets holds kube-apiserver and etcd; RepoRoot is the main module (for its CRDs, which
	// the multicache scheduler's cache watches).
	Assets, RepoRoot string
	// Dir receives one directory per run (the control plane's and the scheduler's logs).
	Dir string
	// Schedulers are the subjects (SchedulerFlagsSubject), in the order of round 0; the
	// order rotates every round.
	Schedulers []Subject
	// Operator, when set, is multicache's operator alone (MulticacheSubject): every round,
	// on the stock scheduler's cluster once its pods are bound, it is started, waited for
	// until it holds every node and pod, and its settled RSS read, so that the multicache
	// scheduler can be weighed against the two processes it replaces.
	Operator *Subject
	// Nodes and Pods: the cluster's nodes, and the pending pods created at once.
	Nodes, Pods int
	// Rounds: every subject is measured once a round, on a fresh cluster.
	Rounds int
	// Writers create the nodes and the pods in parallel.
	Writers int
	// Timeout bounds the wait for a scheduler to be up and, separately, for every pod to be bound.
	Timeout time.Duration
	// Settle is how long a scheduler runs after the last binding before its memory is read.
	Settle time.Duration
	// Log receives progress.
	Log io.Writer
}

// SchedRun is one subject's run of one round.
type SchedRun struct {
	Subject string
	Round   int
	// Up is the time from the process's start until its cache held every node; CPUUp the
	// CPU it used until then.
	Up, CPUUp time.Duration
	// Create is the time the harness took to create every pod (first request sent to
	// last answer); Span the time from the first create sent to the last binding seen.
	Create, Span time.Duration
	// Bound is how many pods were seen bound (Pods when the run completed).
	Bound int
	// Latency: per pod, the harness's clock from the create call's return to the first
	// watch event that showed the pod bound (sub-millisecond resolution).
	Latency Quantiles
	// CPU is the scheduler's CPU (user + system, /proc) from the first create to the last
	// binding seen.
	CPU time.Duration
	// APIServerCPU and EtcdCPU over the same window.
	APIServerCPU, EtcdCPU time.Duration
	// PeakRSS (VmHWM, since the start), SettledRSS (VmRSS) and HeapAfterGC are read Settle
	// after the last binding.
	PeakRSS, SettledRSS, HeapAfterGC int64
	// Operator is multicache's operator alone on this run's cluster (SchedBenchConfig's
	// Operator; nil when not measured): up when it held every node and pod, memory read
	// Settle later.
	Operator *ColdStart
}

// PodsPerSecond is Bound over Span.
func (r SchedRun) PodsPerSecond() float64 {
	if r.Span <= 0 {
		return 0
	}
	return float64(r.Bound) / r.Span.Seconds()
}

// SchedBenchResult is every run of a bench-scheduler.
type SchedBenchResult struct {
	Config  SchedBenchConfig
	Started time.Time
	Runs    []SchedRun
}

// labelSchedBench marks the pending pods of bench-scheduler (the harness watches only those).
const labelSchedBench = "bench.multicache.dev/scheduling"

// MakePendingPod returns pending pod slot of ReplicaSet r (uid is the ReplicaSet's): MakePod's
// labels, owner reference and requests, no node, no pod group.
func MakePendingPod(r, slot int, rsUID types.UID) *corev1.Pod {
	p := MakePod(r, slot, rsUID, "")
	delete(p.Labels, v1alpha1.PodGroupLabel) // never a gang: no pod waits at Permit
	p.Labels[labelSchedBench] = "pending"
	return p
}

// RunSchedBench runs every round: for each subject in turn (the order rotates every
// round), a fresh cluster, its nodes, the scheduler, the pods. When a run fails it returns
// the runs measured until then with the error.
func RunSchedBench(ctx context.Context, cfg SchedBenchConfig) (*SchedBenchResult, error) {
	res := &SchedBenchResult{Config: cfg, Started: time.Now()}
	n := len(cfg.Schedulers)
	for round := range cfg.Rounds {
		for k := range n {
			s := cfg.Schedulers[(k+round)%n]
			fmt.Fprintf(cfg.Log, "round %d: %s\n", round+1, s.Name)
			run, err := schedRun(ctx, cfg, s, round)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round+1, s.Name, err)
			}
			fmt.Fprintf(cfg.Log, "round %d: %s: %d pods in %.1fs (%.0f/s), p50 %.0f ms, p99 %.0f ms, CPU %.1fs, settled RSS %s\n",
				round+1, s.Name, run.Bound, run.Span.Seconds(), run.PodsPerSecond(), msf(run.Latency.P50), msf(run.Latency.P99),
				run.CPU.Seconds(), mib(run.SettledRSS))
			res.Runs = append(res.Runs, run)
		}
	}
	return res, nil
}

// schedRun measures subject s once on a fresh cluster.
func schedRun(ctx context.Context, cfg SchedBenchConfig, s Subject, round int) (SchedRun, error) {
	run := SchedRun{Subject: s.Name, Round: round}
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d", s.Name, round+1))
	cl, err := startCluster(cfg.Assets, cfg.RepoRoot, dir, cfg.Log)
	if err != nil {
		return run, err
	}
	defer stopCluster(cl, cfg.Log)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	api, err := NewAPIServer(cl.Config)
	if err != nil {
		return run, err
	}

	t := time.Now()
	if err := createNodes(ctx, cl.Client, cfg.Nodes, cfg.Writers); err != nil {
		return run, err
	}
	size := Size{Nodes: cfg.Nodes, Pods: cfg.Pods}
	sets := size.ReplicaSets()
	uids := make([]types.UID, sets)
	if err := harness.Parallel(ctx, size.Namespaces(), cfg.Writers, func(ctx context.Context, i int) error { return harness.Create(ctx, cl.Client, MakeNamespace(i)) }); err != nil {
		return run, fmt.Errorf("creating namespaces: %w", err)
	}
	if err := harness.Parallel(ctx, sets, cfg.Writers, func(ctx context.Context, r int) error {
		rs := MakeReplicaSet(r, podsOf(size, r))
		if err := harness.Create(ctx, cl.Client, rs); err != nil {
			return err
		}
		uids[r] = rs.UID
		return nil
	}); err != nil {
		return run, fmt.Errorf("creating ReplicaSets: %w", err)
	}
	fmt.Fprintf(cfg.Log, "  %d nodes (Ready, untainted) and %d ReplicaSets in %.1fs\n", cfg.Nodes, sets, time.Since(t).Seconds())

	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		return run, err
	}
	w := newBindWatch(cs)
	if err := w.start(ctx); err != nil {
		return run, err
	}

	env := Env{Kubeconfig: cl.Kubeconfig, Dir: dir, Want: Want{Nodes: cfg.Nodes}}
	logPath := filepath.Join(dir, s.Name+".log")
	in, err := s.Start(env, logPath)
	if err != nil {
		return run, err
	}
	defer in.Stop(10 * time.Second)
	up, err := Watch(ctx, in, env.Want, Timing{Poll: 100 * time.Millisecond, Timeout: cfg.Timeout}, logPath)
	if err != nil {
		return run, err
	}
	run.Up, run.CPUUp = up.Full, up.CPU
	fmt.Fprintf(cfg.Log, "  %s (pid %d) up in %.1fs (%s), CPU %.1fs\n", s.Name, in.Pid(), up.Full.Seconds(), up.Detail, up.CPU.Seconds())

	cpu0, err := ReadCPU(in.Pid())
	if err != nil {
		return run, err
	}
	api0, err := api.CPU()
	if err != nil {
		return run, err
	}
	created := make([]time.Time, cfg.Pods)
	first := time.Now()
	if err := harness.Parallel(ctx, cfg.Pods, cfg.Writers, func(ctx context.Context, i int) error {
		r := i / PodsPerReplicaSet
		if err := harness.Create(ctx, cl.Client, MakePendingPod(r, i%PodsPerReplicaSet, uids[r])); err != nil {
			return err
		}
		created[i] = time.Now()
		return nil
	}); err != nil {
		return run, fmt.Errorf("creating pods: %w", err)
	}
	run.Create = time.Since(first)
	fmt.Fprintf(cfg.Log, "  %d pods created in %.1fs; %d bound so far\n", cfg.Pods, run.Create.Seconds(), len(w.snapshot()))

	last, err := w.waitAll(ctx, cfg.Pods, cfg.Timeout, in, logPath)
	if err != nil {
		return run, err
	}
	cpu1, err := ReadCPU(in.Pid())
	if err != nil {
		return run, err
	}
	api1, err := api.CPU()
	if err != nil {
		return run, err
	}
	run.CPU, run.APIServerCPU, run.EtcdCPU = cpu1-cpu0, api1.APIServerCPU-api0.APIServerCPU, api1.EtcdCPU-api0.EtcdCPU
	run.Span = last.Sub(first)
	bound := w.snapshot()
	run.Bound = len(bound)
	lat := make([]time.Duration, 0, cfg.Pods)
	for i := range cfg.Pods {
		if at, ok := bound[populatedPod(i).String()]; ok {
			lat = append(lat, max(0, at.Sub(created[i])))
		}
	}
	run.Latency = quantiles(lat)

	cs0 := ColdStart{Subject: s.Name, Round: round}
	if err := Settle(ctx, in, Timing{Settle: cfg.Settle}, &cs0); err != nil {
		return run, err
	}
	run.PeakRSS, run.SettledRSS, run.HeapAfterGC = cs0.PeakRSS, cs0.SettledRSS, cs0.HeapAfterGC
	if cfg.Operator != nil && s.Name == StockSchedulerName {
		// The operator alone on this cluster, its pods bound: up when it holds every node
		// and pod, its memory read after the settle.
		env.Want.Pods = cfg.Pods
		op, err := MeasureColdStart(ctx, *cfg.Operator, env, round, Timing{Poll: 100 * time.Millisecond, Timeout: cfg.Timeout, Settle: cfg.Settle},
			filepath.Join(dir, cfg.Operator.Name+".log"), nil)
		if err != nil {
			return run, fmt.Errorf("%s alone: %w", cfg.Operator.Name, err)
		}
		fmt.Fprintf(cfg.Log, "  %s alone up in %.1fs, settled RSS %s\n", op.Subject, op.Full.Seconds(), mib(op.SettledRSS))
		run.Operator = &op
	}
	return run, nil
}

// bindWatch records when the harness first saw each bench pod bound (spec.nodeName set).
type bindWatch struct {
	informer cache.SharedIndexInformer
	mu       sync.Mutex
	bound    map[string]time.Time
	last     time.Time
	changed  chan struct{}
}

func newBindWatch(cs kubernetes.Interface) *bindWatch {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.Set{labelSchedBench: "pending"}.String()
	}))
	return &bindWatch{informer: f.Core().V1().Pods().Informer(), bound: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

func (w *bindWatch) start(ctx context.Context) error {
	see := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		now := time.Now()
		key := p.Namespace + "/" + p.Name
		w.mu.Lock()
		if _, seen := w.bound[key]; !seen {
			w.bound[key] = now
			w.last = now
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	if _, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		return err
	}
	go w.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
		return fmt.Errorf("the harness's pod watch did not sync")
	}
	return nil
}

func (w *bindWatch) snapshot() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.bound)
}

// waitAll waits until n pods were seen bound and returns when the last was; it fails when
// the scheduler exits or timeout passes first.
func (w *bindWatch) waitAll(ctx context.Context, n int, timeout time.Duration, in *Instance, logPath string) (time.Time, error) {
	deadline := time.After(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		w.mu.Lock()
		got, last := len(w.bound), w.last
		w.mu.Unlock()
		if got >= n {
			return last, nil
		}
		if exited, err := in.Exited(); exited {
			return time.Time{}, fmt.Errorf("%w (%v) with %d of %d pods bound; log:\n%s", errExited, err, got, n, controlplane.Tail(logPath, 20))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-deadline:
			return time.Time{}, fmt.Errorf("%d of %d pods bound after %v; log:\n%s", got, n, timeout, controlplane.Tail(logPath, 20))
		case <-w.changed:
		case <-tick.C:
		}
	}
}
