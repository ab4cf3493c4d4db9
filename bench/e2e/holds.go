package e2e

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The reserve-on-delete run (`make bench-holds`): a Deployment whose every pod is
// annotated multicache.dev/reserve-on-delete is rolled, scaled down and partly
// force-deleted on a cluster with the real control plane (kube-apiserver, etcd,
// kube-scheduler binding the pods, kube-controller-manager running the Deployment and
// ReplicaSet controllers) and no kubelet: Kubelets reports bound pods Running and Ready and
// removes deleted ones. While it
// runs, a sampler reads every node's charge from multicache's debug endpoint between two
// lists of the API and judges it (holds_account.go): the sampled excess is what multicache
// charged above the node's live pods plus the holds whose replacement is still coming.

// holdsNamespace holds the run's Deployment.
const holdsNamespace = "holds"

// holdsApp is the app label of the Deployment's pods.
const holdsApp = "web"

// HoldsConfig is one reserve-on-delete run.
type HoldsConfig struct {
	// Assets holds kube-apiserver and etcd; RepoRoot is the main module (for its CRDs).
	Assets, RepoRoot string
	// Dir receives the logs, the kubeconfig and the evidence of any excess.
	Dir string
	// Multicache, Scheduler and ControllerManager are the binaries run.
	Multicache, Scheduler, ControllerManager string
	// MulticacheArgs are extra flags of multicache.
	MulticacheArgs []string
	// Nodes in the cluster; Replicas of the Deployment, rolled, then scaled to ScaleTo.
	Nodes, Replicas, ScaleTo int
	// Evict, when positive, adds a last phase: that many pods force-deleted at once (their
	// ReplicaSet replaces them: holds are due until the replacements landed).
	Evict int
	// MaxSurge and MaxUnavailable of the rolling update (e.g. "25%").
	MaxSurge, MaxUnavailable string
	// PodCPU and PodMemory are each pod's requests.
	PodCPU, PodMemory string
	// SamplePeriod is how often multicache's nodes are sampled.
	SamplePeriod time.Duration
	// DeleteDelay is how long a pod being deleted stays before the kubelet removes it.
	DeleteDelay time.Duration
	// Settle is how long the sampling goes on after the rollout and after the scale-down.
	Settle time.Duration
	// PhaseTimeout bounds each phase.
	PhaseTimeout time.Duration
	// ControllerQPS limits kube-controller-manager's requests a second.
	ControllerQPS int
	// Log receives progress.
	Log io.Writer
}

// HoldsResult is what one run measured.
type HoldsResult struct {
	Config  HoldsConfig
	Started time.Time
	// Created is how long the Deployment took to be available at Replicas.
	Created time.Duration
	// Phases are the rollout and the scale-down, in order.
	Phases []HoldsPhase
	// Samples are every sample, in order; SampleErrors the failed ones (LastSampleErr).
	Samples       []HoldSample
	SampleErrors  int
	LastSampleErr error
	// Evidence lists the files kept of the first samples with an excess.
	Evidence []string
	// Counters are multicache_reserve_on_delete_total by result at the end.
	Counters map[string]float64
	// Reservations counts the replacement Reservations in the API at the end, by phase.
	Reservations map[string]int
	// InvariantViolations is multicache_invariant_violations_total at the end (the verify
	// loop's own check of the cache); Violations the first ones its log names.
	InvariantViolations float64
	Violations          []string
	// Compare is the number of differences /debug/cache/compare reports at the end, and
	// the first.
	Compare      int
	CompareFirst string
	// KubeletErrors counts the kubelets' writes that failed and were retried.
	KubeletErrors int
	Duration      time.Duration
}

// HoldsPhase is one change of the Deployment and the settling after it.
type HoldsPhase struct {
	Name string
	// Start is when the change was written; Done when the API first showed it complete;
	// End when it ended, by the kubelets' marks: the last pod landed or removed.
	Start, Done, End time.Time
	// LastLanded is when the last pod was first seen bound, LastRemoved when the last
	// pod was removed (zero when none since Start).
	LastLanded, LastRemoved time.Time
}

// RunHolds runs the reserve-on-delete end to end. When a step fails after the cluster
// started, it returns what was measured until then with the error.
func RunHolds(ctx context.Context, cfg HoldsConfig) (*HoldsResult, error) {
	res := &HoldsResult{Config: cfg, Started: time.Now()}
	log := cfg.Log
	cl, err := startCluster(cfg.Assets, cfg.RepoRoot, cfg.Dir, log)
	if err != nil {
		return nil, err
	}
	defer stopCluster(cl, log)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if err := cl.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: holdsNamespace}}); err != nil {
		return nil, err
	}
	if err := createNodes(ctx, cl.Client, cfg.Nodes, 8); err != nil {
		return nil, err
	}
	nodes := make([]string, cfg.Nodes)
	for i := range nodes {
		nodes[i] = NodeName(i)
	}

	env := Env{Kubeconfig: cl.Kubeconfig, Dir: cfg.Dir, Want: Want{Nodes: cfg.Nodes}}
	mcLog := filepath.Join(cfg.Dir, "multicache.log")
	mc, err := MulticacheSubject(cfg.Multicache, cfg.MulticacheArgs...).Start(env, mcLog)
	if err != nil {
		return nil, err
	}
	defer mc.Stop(10 * time.Second)
	if _, err := Watch(ctx, mc, env.Want, Timing{Poll: 100 * time.Millisecond, Timeout: 2 * time.Minute}, mcLog); err != nil {
		return nil, fmt.Errorf("multicache: %w", err)
	}
	sched, err := SchedulerFlagsSubject(StockSchedulerName, cfg.Scheduler, 0).Start(env, filepath.Join(cfg.Dir, "kube-scheduler.log"))
	if err != nil {
		return nil, err
	}
	defer sched.Stop(10 * time.Second)
	kcm, err := StartControllerManager(cfg.ControllerManager, env,
		[]string{"deployment-controller", "replicaset-controller"}, cfg.ControllerQPS, filepath.Join(cfg.Dir, "kube-controller-manager.log"))
	if err != nil {
		return nil, err
	}
	defer kcm.Stop(10 * time.Second)
	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		return nil, err
	}
	kubelets := NewKubelets(cs, holdsNamespace, cfg.DeleteDelay)
	if err := kubelets.Start(ctx, 8); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "multicache (pid %d), kube-scheduler (pid %d), kube-controller-manager (pid %d) and the kubelets of %d nodes run; logs in %s\n",
		mc.Pid(), sched.Pid(), kcm.Pid(), cfg.Nodes, cfg.Dir)

	d := holdsDeployment(cfg)
	if err := cl.Client.Create(ctx, d); err != nil {
		return nil, fmt.Errorf("creating the Deployment: %w", err)
	}
	if _, err := waitRolledOut(ctx, cl.Client, cfg.Replicas, cfg.PhaseTimeout); err != nil {
		_, _, n, last := kubelets.Landmarks()
		return res, fmt.Errorf("the Deployment's first %d pods: %w (kubelet writes failed: %d, the last: %v)", cfg.Replicas, err, n, last)
	}
	res.Created = time.Since(res.Started)
	fmt.Fprintf(log, "Deployment %s/%s available with %d pods\n", holdsNamespace, d.Name, cfg.Replicas)

	smp := &holdSampler{c: cl.Client, namespace: holdsNamespace, debugURL: DebugURL(mc), nodes: nodes, pods: kubelets, dir: cfg.Dir}
	smp.setPhase("before")
	sampling, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		smp.run(sampling, cfg.SamplePeriod)
	}()
	collect := func() {
		stopSampling()
		<-sampled
		res.Samples, res.SampleErrors, res.LastSampleErr, res.Evidence = smp.result()
		_, _, res.KubeletErrors, _ = kubelets.Landmarks()
	}
	// Sample a little before the first change: the baseline is no hold and no excess.
	time.Sleep(2 * cfg.SamplePeriod)

	type step struct {
		name   string
		change func(context.Context) error
		want   int
	}
	steps := []step{
		{"rollout", patchDeployment(cl.Client, func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations["bench.multicache.dev/revision"] = "2"
		}), cfg.Replicas},
		{"scale-down", patchDeployment(cl.Client, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To(int32(cfg.ScaleTo)) }), cfg.ScaleTo},
	}
	if cfg.Evict > 0 {
		steps = append(steps, step{"force-delete", forceDelete(cl.Client, cfg.Evict), cfg.ScaleTo})
	}
	for _, st := range steps {
		ph, err := runHoldsPhase(ctx, cl.Client, kubelets, smp, st.name, st.change, st.want, cfg)
		res.Phases = append(res.Phases, ph)
		if err != nil {
			collect()
			return res, fmt.Errorf("%s: %w", st.name, err)
		}
		fmt.Fprintf(log, "%s complete in %.1fs; sampled %s more\n", st.name, ph.End.Sub(ph.Start).Seconds(), cfg.Settle)
		time.Sleep(cfg.Settle)
	}
	collect()

	if err := readHoldsEnd(ctx, cl.Client, mc, res); err != nil {
		return res, err
	}
	res.Violations = loggedViolations(mcLog, 5)
	res.Duration = time.Since(res.Started)
	return res, nil
}
