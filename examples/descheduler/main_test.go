package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/envtest"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

// env is the real kube-apiserver and etcd the tests run against.
var env *envtest.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// TestLowNode_EvictsOnlyWhatBudgetsGangsAndOwnersAllow: one node 56% requested, two empty
// ones; lownode (low 20%, high 30%) moves pods off the busy node. Of its nine pods only
// three may go: the two of a plain ReplicaSet and one of the two a budget allowing one
// disruption covers (the fork lowers the budget after the first, so the plan never takes
// the second). A DaemonSet's pod, a bare pod, a pod whose budget allows none and the two
// members of a gang of minMember 2 stay. The evictions go through the API server's
// Eviction API, which checks the budgets again.
func TestLowNode_EvictsOnlyWhatBudgetsGangsAndOwnersAllow(t *testing.T) {
	ns := namespace(t, "lownode")
	addNode(t, "busy", "8")
	addNode(t, "idle-1", "16")
	addNode(t, "idle-2", "16")

	create(t, &v1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gang"}, Spec: v1alpha1.PodGroupSpec{MinMember: 2}})
	addBudget(t, ns, "budget", 1)
	addBudget(t, ns, "guarded", 0)
	for _, p := range []*corev1.Pod{
		pod(ns, "ds", daemonSet, nil),
		pod(ns, "bare", "", nil),
		pod(ns, "web-1", "web", nil),
		pod(ns, "web-2", "web", nil),
		pod(ns, "budget-1", "budget", map[string]string{"budget": "budget"}),
		pod(ns, "budget-2", "budget", map[string]string{"budget": "budget"}),
		pod(ns, "guarded-1", "guarded", map[string]string{"budget": "guarded"}),
		pod(ns, "gang-1", "gang", map[string]string{multicache.PodGroupLabel: "gang"}),
		pod(ns, "gang-2", "gang", map[string]string{multicache.PodGroupLabel: "gang"}),
	} {
		create(t, p)
		// Running and Ready, as a kubelet reports: the Eviction API checks (and spends) the
		// budgets of healthy pods only.
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		if err := env.Client.Status().Update(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}

	start(t, "--lownode-low=20", "--lownode-high=30", "--lownode-interval=200ms", "--lownode-evict")

	evicted := func() []string {
		var pods corev1.PodList
		if err := env.Client.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				out = append(out, p.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	eventually(t, "three pods are evicted", func() (bool, string) { e := evicted(); return len(e) >= 3, fmt.Sprint(e) })
	time.Sleep(2 * time.Second) // ten more plans: none may evict more
	got := evicted()
	if len(got) != 3 || got[0] != "budget-1" && got[0] != "budget-2" || got[1] != "web-1" || got[2] != "web-2" {
		t.Errorf("evicted %v, want web-1, web-2 and one of budget-1, budget-2", got)
	}
}

func TestLowNode_BadSettingsStopTheCommandNamingTheFlag(t *testing.T) {
	for args, want := range map[string]string{
		"--lownode-low=40 --lownode-high=30": "--lownode-low=40 must be under --lownode-high=30",
		"--lownode-high=130":                 "both are percents",
		"--lownode-interval=0s":              "--lownode-interval=0s: must be positive",
		"--lownode-max-per-node=0":           "--lownode-max-per-node=0: must be at least 1",
	} {
		if _, err := newCommand().Options(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", args, err, want)
		}
	}
}

// start runs the descheduler's multicache in process until the test ends.
func start(t *testing.T, args ...string) {
	t.Helper()
	args = append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0", "--low-free-threshold=0"}, args...)
	opts, err := newCommand().Options(args)
	if err != nil {
		t.Fatal(err)
	}
	opts.SetSkipControllerNameValidation(true)
	op, err := multicache.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with %v", err)
		}
	})
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s: %s", what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// addNode adds a Ready, untainted node with cpu CPUs and 64 GiB allocatable.
func addNode(t *testing.T, name, cpu string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	create(t, n)
	list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: list, Allocatable: list,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	if err := env.Client.Status().Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready; the node lifecycle controller, which does
	// not run here, lifts the taint once the node is Ready.
	n.Spec.Taints = nil
	if err := env.Client.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// addBudget adds a budget over the pods labelled budget=name whose status allows allowed
// disruptions (written as the disruption controller would: none runs here).
func addBudget(t *testing.T, ns, name string, allowed int32) {
	t.Helper()
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"budget": name}}},
	}
	create(t, b)
	b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: b.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1 + allowed, DesiredHealthy: 1, ExpectedPods: 1 + allowed}
	if err := env.Client.Status().Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// daemonSet names the pod's owner a DaemonSet.
const daemonSet = "node-agent"

// pod is a pod bound to the busy node requesting 500m, controlled by the ReplicaSet owner
// (the DaemonSet daemonSet; none for "").
func pod(ns, name, owner string, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "busy", Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}},
	}
	kind := "ReplicaSet"
	if owner == daemonSet {
		kind = "DaemonSet"
	}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner,
			UID: types.UID("uid-" + owner), Controller: ptr.To(true)}}
	}
	return p
}
