package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The reserve-on-delete run (`make bench-holds`, issue 18): a Deployment whose every pod is
// annotated multicache.dev/reserve-on-delete is rolled and then scaled down on a cluster
// with the real control plane (kube-apiserver, etcd, kube-scheduler binding the pods,
// kube-controller-manager running the Deployment and ReplicaSet controllers) and no
// kubelet: Kubelets reports bound pods Running and Ready and removes deleted ones. While it
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
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	cpLog, err := os.Create(filepath.Join(cfg.Dir, "controlplane.log"))
	if err != nil {
		return nil, err
	}
	defer cpLog.Close()
	fmt.Fprintf(log, "starting kube-apiserver and etcd from %s\n", cfg.Assets)
	cl, err := StartCluster(cfg.Assets, cfg.RepoRoot, cfg.Dir, cpLog)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintf(log, "stopping the control plane: %v\n", err)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if err := cl.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: holdsNamespace}}); err != nil {
		return nil, err
	}
	nodes := make([]string, cfg.Nodes)
	for i := range cfg.Nodes {
		n := MakeNode(i)
		if err := cl.Client.Create(ctx, n); err != nil {
			return nil, fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		// The API server's TaintNodesByCondition admission taints a new node not-ready;
		// the node lifecycle controller would lift it once the kubelet reports Ready. The
		// harness is both: the node is Ready.
		patch := client.MergeFrom(n.DeepCopy())
		n.Spec.Taints = nil
		if err := cl.Client.Patch(ctx, n, patch); err != nil {
			return nil, fmt.Errorf("untainting node %s: %w", n.Name, err)
		}
		nodes[i] = n.Name
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
	sched, err := SchedulerSubject(cfg.Scheduler).Start(env, filepath.Join(cfg.Dir, "kube-scheduler.log"))
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

// runHoldsPhase writes one change and waits until the API shows the Deployment complete:
// want pods, every one of the latest revision, ready and available, none being deleted.
func runHoldsPhase(ctx context.Context, c client.Client, kubelets *Kubelets, smp *holdSampler, name string,
	change func(context.Context) error, want int, cfg HoldsConfig) (HoldsPhase, error) {
	ph := HoldsPhase{Name: name}
	smp.setPhase(name)
	ph.Start = time.Now()
	if err := change(ctx); err != nil {
		return ph, err
	}
	done, err := waitRolledOut(ctx, c, want, cfg.PhaseTimeout)
	if err != nil {
		return ph, err
	}
	smp.setPhase("settle-" + name)
	ph.Done = done
	landed, removed, _, _ := kubelets.Landmarks()
	if landed.After(ph.Start) {
		ph.LastLanded = landed
	}
	if removed.After(ph.Start) {
		ph.LastRemoved = removed
	}
	ph.End = ph.Done
	if last := later(ph.LastLanded, ph.LastRemoved); !last.IsZero() {
		ph.End = last
	}
	return ph, nil
}

// patchDeployment returns a change of the run's Deployment.
func patchDeployment(c client.Client, change func(*appsv1.Deployment)) func(context.Context) error {
	return func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: holdsNamespace, Name: holdsApp}, &d); err != nil {
			return err
		}
		patch := client.MergeFrom(d.DeepCopy())
		change(&d)
		return c.Patch(ctx, &d, patch)
	}
}

// forceDelete returns the deletion of n of the Deployment's pods (the first by name) with
// grace period 0, as `kubectl delete --force` does: each is gone at once, with no
// deletionTimestamp first, and its ReplicaSet creates a replacement after.
func forceDelete(c client.Client, n int) func(context.Context) error {
	return func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(holdsNamespace)); err != nil {
			return err
		}
		slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if len(pods.Items) < n {
			return fmt.Errorf("%d pods to force-delete, only %d exist", n, len(pods.Items))
		}
		for i := range pods.Items[:n] {
			if err := c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); err != nil {
				return fmt.Errorf("force-deleting pod %s: %w", pods.Items[i].Name, err)
			}
		}
		return nil
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitRolledOut polls until the Deployment's status and its pods show want pods of its
// latest revision, available, and no pod being deleted; it returns the time of the list
// that showed it.
func waitRolledOut(ctx context.Context, c client.Client, want int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	detail := ""
	for {
		at := time.Now()
		var d appsv1.Deployment
		var pods corev1.PodList
		err := c.Get(ctx, client.ObjectKey{Namespace: holdsNamespace, Name: holdsApp}, &d)
		if err == nil {
			err = c.List(ctx, &pods, client.InNamespace(holdsNamespace))
		}
		if err == nil {
			deleting, bound, ready := 0, 0, 0
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil {
					deleting++
				}
				if p.Spec.NodeName != "" {
					bound++
				}
				if podReady(p) {
					ready++
				}
			}
			st := d.Status
			w := int32(want)
			if st.ObservedGeneration >= d.Generation && st.Replicas == w && st.UpdatedReplicas == w &&
				st.AvailableReplicas == w && len(pods.Items) == want && bound == want && ready == want && deleting == 0 {
				return at, nil
			}
			detail = fmt.Sprintf("status replicas=%d updated=%d available=%d; %d pods, %d bound, %d ready, %d being deleted",
				st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, len(pods.Items), bound, ready, deleting)
		} else {
			detail = err.Error()
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("not rolled out to %d pods after %v: %s", want, timeout, detail)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// holdsDeployment is the run's Deployment: every pod annotated reserve-on-delete.
func holdsDeployment(cfg HoldsConfig) *appsv1.Deployment {
	labels := map[string]string{labelApp: holdsApp}
	surge, unavailable := intstr.Parse(cfg.MaxSurge), intstr.Parse(cfg.MaxUnavailable)
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cfg.PodCPU), corev1.ResourceMemory: resource.MustParse(cfg.PodMemory)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: holdsNamespace, Name: holdsApp},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(cfg.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					v1alpha1.ReserveOnDeleteAnnotation: "true",
					"bench.multicache.dev/revision":    "1",
				}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl},
				}}},
			},
		},
	}
}

// readHoldsEnd reads, after the last phase, multicache's reserve-on-delete counters, the
// replacement Reservations in the API, and multicache's comparison with the API.
func readHoldsEnd(ctx context.Context, c client.Client, mc *Instance, res *HoldsResult) error {
	const counter, violations = "multicache_reserve_on_delete_total", "multicache_invariant_violations_total"
	m, err := Scrape(ctx, FilterURL(mc.MetricsURL, counter, violations), counter, violations)
	if err != nil {
		return err
	}
	res.InvariantViolations, _ = m.Get(violations)
	res.Counters = map[string]float64{}
	for key, v := range m {
		if result, ok := strings.CutPrefix(key, counter+`{result="`); ok {
			res.Counters[strings.TrimSuffix(result, `"}`)] = v
		}
	}
	var rsvs v1alpha1.ReservationList
	if err := c.List(ctx, &rsvs, client.InNamespace(holdsNamespace)); err != nil {
		return err
	}
	res.Reservations = map[string]int{}
	for _, r := range rsvs.Items {
		if _, ok := r.Annotations[v1alpha1.ReplacesPodAnnotation]; ok {
			res.Reservations[string(r.Status.Phase)]++
		}
	}
	body, err := getSlow(ctx, DebugURL(mc)+"/debug/cache/compare", 5*time.Minute)
	if err != nil {
		return err
	}
	var diffs []json.RawMessage
	if err := json.Unmarshal(body, &diffs); err != nil {
		return fmt.Errorf("/debug/cache/compare: %w: %.200s", err, body)
	}
	res.Compare = len(diffs)
	if len(diffs) > 0 {
		res.CompareFirst = string(diffs[0])
	}
	return nil
}

// loggedViolations returns up to n distinct invariant violations multicache's verify loop
// logged ("cache invariant violated", JSON lines).
func loggedViolations(logPath string, n int) []string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		var entry struct {
			Msg       string `json:"msg"`
			Violation string `json:"violation"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "cache invariant violated" || slices.Contains(out, entry.Violation) {
			continue
		}
		if out = append(out, entry.Violation); len(out) == n {
			break
		}
	}
	return out
}
