package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scenarioLabel on a node and in a pod's node selector keeps each test on its own nodes.
const scenarioLabel = "e2e.multicache.dev/scenario"

// newNamespace creates a namespace for one test.
func newNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// addNode creates a Node of the scenario with cpu and room for 110 pods in its status, as
// a kubelet would report it.
func addNode(ctx context.Context, t *testing.T, name, scenario, cpu string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		scenarioLabel: scenario, corev1.LabelHostname: name,
	}}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	room := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	n.Status = corev1.NodeStatus{Capacity: room, Allocatable: room, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	if err := env.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The API server's TaintNodesByCondition admission taints a new node not-ready; the
	// node lifecycle controller (not run here) would lift it once the node reports Ready.
	n.Spec.Taints = nil
	if err := env.Client.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// podSpec is a pod of one container requesting cpu, kept on the scenario's nodes.
func podSpec(scenario, cpu string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{scenarioLabel: scenario},
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")},
		}}},
	}
}

// createPod creates a pod of the scenario requesting cpu, with labels.
func createPod(ctx context.Context, t *testing.T, ns, name, scenario, cpu string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: podSpec(scenario, cpu)}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// nodeOf returns the node a pod is bound to ("" while pending).
func nodeOf(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	var p corev1.Pod
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	return p.Spec.NodeName
}

// eventually polls cond every 100ms until it holds, failing the test after timeout with
// what cond last said.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, timeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// never checks cond every 100ms for d, failing the test the first time it holds.
func never(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if bad, why := cond(); bad {
			t.Fatalf("%s: %s", what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// podsOf lists the pods of a namespace matching labels.
func podsOf(ctx context.Context, t *testing.T, ns string, labels map[string]string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// bound describes where pods are.
func bound(pods []corev1.Pod) (n int, where string) {
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
		where += fmt.Sprintf(" %s@%q", p.Name, p.Spec.NodeName)
	}
	return n, where
}
