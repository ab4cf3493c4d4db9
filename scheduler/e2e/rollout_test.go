package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// TestRollout_EachReplacementLandsOnItsKeptPlaceAndNoUnrelatedPodTakesOne: a Deployment of
// 3 pods annotated reserve-on-delete (on the Deployment: the deployment controller copies
// it to its ReplicaSets) fills 3 of 4 nodes that each fit one of its pods; KWOK runs them.
// Its template changes: a rolling update with maxSurge 1 and maxUnavailable 0, so that each
// new pod after the first is created only when an old one goes, and fits nowhere but the
// place the old one left: the promise is exact. The first new pod (the surge) has no kept
// place: it lands on the fourth node. Unrelated pods that would fit a kept place wait
// through the whole rollout; each new pod but the surge lands on the node a Reservation
// kept for it and matches it. The last old pod's place is not kept (the new ReplicaSet has
// its 3 pods): the unrelated pods land there.
func TestRollout_EachReplacementLandsOnItsKeptPlaceAndNoUnrelatedPodTakesOne(t *testing.T) {
	ctx := context.Background()
	const ns, scenario, replicas = "rollout", "rollout", 3
	newNamespace(ctx, t, ns)
	var nodes []string
	for i := range replicas + 1 {
		nodes = append(nodes, fmt.Sprintf("rollout-%d", i+1))
		addKWOKNode(ctx, t, nodes[i], scenario, "2")
	}
	checkRoom(ctx, t, nodes, "2")
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(scenario, "1500m")},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}},
			// The new pods wait 2s ready before they count as available: the unrelated pods
			// are created before the first old pod goes.
			MinReadySeconds: 2,
		},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the Deployment's 3 pods ready, one per node", func() (bool, string) {
		pods := podsOf(ctx, t, ns, labels)
		return countReady(pods) == replicas && len(pods) == replicas && len(nodesOf(pods)) == replicas, describe(pods)
	})
	old := map[string]string{} // pod -> node
	for _, p := range podsOf(ctx, t, ns, labels) {
		old[p.Name] = p.Spec.NodeName
	}
	spare := ""
	for _, n := range nodes {
		if !slices.Contains(nodesOf(podsOf(ctx, t, ns, labels)), n) {
			spare = n
		}
	}

	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Template.Annotations = map[string]string{"e2e.multicache.dev/rollout": "2"}
	if err := env.Client.Patch(ctx, dep, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the surge pod bound to the spare node "+spare, func() (bool, string) {
		pods := podsOf(ctx, t, ns, labels)
		for _, p := range pods {
			if _, isOld := old[p.Name]; !isOld && p.Spec.NodeName == spare {
				return true, ""
			}
		}
		return false, describe(pods)
	})
	others := map[string]string{"app": "other"}
	for i := range 2 {
		createPod(ctx, t, ns, fmt.Sprintf("other-%d", i+1), scenario, "1", others)
	}

	eventually(t, 60*time.Second, "the rollout done", func() (bool, string) {
		// The unrelated pods are read first: one bound then, while an old pod is still
		// there after, was bound while every node was full or kept. (Read the other way
		// round, the last old pod may go, and its free place be taken, between the reads.)
		unrelated := podsOf(ctx, t, ns, others)
		pods := podsOf(ctx, t, ns, labels)
		oldLeft := 0
		for _, p := range pods {
			if _, isOld := old[p.Name]; isOld {
				oldLeft++
			}
		}
		if oldLeft > 0 {
			for _, o := range unrelated {
				if o.Spec.NodeName != "" {
					t.Fatalf("unrelated pod %s bound to %s while the rollout keeps places (%d old pods left):%s",
						o.Name, o.Spec.NodeName, oldLeft, describe(pods))
				}
			}
		}
		return oldLeft == 0 && countReady(pods) == replicas && len(pods) == replicas, describe(pods)
	})

	// The places kept: one Reservation per old pod but the last, each on that pod's node.
	var kept []v1alpha1.Reservation
	eventually(t, 30*time.Second, "the kept places' Reservations matched by the new pods", func() (bool, string) {
		var list v1alpha1.ReservationList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		kept = list.Items
		matched, got := 0, ""
		for _, r := range kept {
			if r.Status.Phase == v1alpha1.ReservationMatched {
				matched++
			}
			got += fmt.Sprintf(" %s@%s %s", r.Annotations[v1alpha1.ReplacesPodAnnotation], r.Spec.NodeName, r.Status.Phase)
		}
		return len(kept) == replicas-1 && matched == replicas-1, got
	})
	keptNodes := map[string]bool{}
	for _, r := range kept {
		gone := r.Annotations[v1alpha1.ReplacesPodAnnotation]
		if old[gone] != r.Spec.NodeName {
			t.Errorf("Reservation %s keeps %s's place on %s; the pod was on %q", r.Name, gone, r.Spec.NodeName, old[gone])
		}
		owner := r.Status.CurrentOwner
		if owner == nil || nodeOf(ctx, t, ns, owner.Name) != r.Spec.NodeName {
			t.Errorf("Reservation %s on %s is matched by %v, want a new pod on that node", r.Name, r.Spec.NodeName, owner)
		}
		keptNodes[r.Spec.NodeName] = true
	}
	last := ""
	for _, n := range old {
		if !keptNodes[n] {
			last = n
		}
	}
	for _, p := range podsOf(ctx, t, ns, labels) {
		if n := p.Spec.NodeName; n != spare && !keptNodes[n] {
			t.Errorf("new pod %s landed on %s, neither the spare node %s nor a kept place %v", p.Name, n, spare, keptNodes)
		}
	}
	eventually(t, 30*time.Second, "the unrelated pods bound to "+last+", the last old pod's node (not kept)", func() (bool, string) {
		pods := podsOf(ctx, t, ns, others)
		for _, o := range pods {
			if keptNodes[o.Spec.NodeName] || o.Spec.NodeName == spare {
				t.Fatalf("unrelated pod %s bound to %s, a kept place or the surge's node", o.Name, o.Spec.NodeName)
			}
		}
		n, where := bound(pods)
		return n == len(pods), where
	})
	checkRoom(ctx, t, nodes, "2") // each node fitted one of the Deployment's pods throughout
	t.Logf("surge on %s; places kept on %v and taken by the new pods; unrelated pods on %s", spare, keptNodes, last)
}

// addKWOKNode creates a Node of the scenario with cpu that KWOK keeps Ready and whose bound
// pods it runs. Its room and taints are written once KWOK reported it Ready, and again
// until they stay: KWOK's first status, computed from the node as it saw it at an event
// before, writes its own default room (1000 CPUs) over one written meanwhile.
func addKWOKNode(ctx context.Context, t *testing.T, name, scenario, cpu string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{kwokNodeAnnotation: "fake"},
		Labels:      map[string]string{scenarioLabel: scenario, corev1.LabelHostname: name},
	}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	room := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	want, steady := resource.MustParse(cpu), 0
	eventually(t, 30*time.Second, "node "+name+" Ready with "+cpu+" CPU for 1s", func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			t.Fatal(err)
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		got := n.Status.Allocatable[corev1.ResourceCPU]
		switch {
		case !ready:
			return false, "KWOK has not reported it Ready"
		case len(n.Spec.Taints) > 0:
			base := n.DeepCopy()
			n.Spec.Taints = nil // see addNode
			if err := env.Client.Patch(ctx, n, client.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}
		case !got.Equal(want):
			base := n.DeepCopy()
			n.Status.Capacity, n.Status.Allocatable = room, room
			if err := env.Client.Status().Patch(ctx, n, client.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}
		default:
			steady++
			return steady >= 10, ""
		}
		steady = 0
		return false, fmt.Sprintf("%s CPU, taints %v", got.String(), n.Spec.Taints)
	})
}

// checkRoom fails the test unless every node has cpu allocatable and no taint.
func checkRoom(ctx context.Context, t *testing.T, nodes []string, cpu string) {
	t.Helper()
	want := resource.MustParse(cpu)
	for _, name := range nodes {
		var n corev1.Node
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			t.Fatal(err)
		}
		if got := n.Status.Allocatable[corev1.ResourceCPU]; !got.Equal(want) || len(n.Spec.Taints) > 0 {
			t.Fatalf("node %s has %s CPU allocatable and taints %v, want %s and none", name, got.String(), n.Spec.Taints, cpu)
		}
	}
}

// countReady counts the pods whose Ready condition is true.
func countReady(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// nodesOf returns the distinct nodes pods are bound to.
func nodesOf(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		if n := p.Spec.NodeName; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// describe says where pods are and whether they are ready.
func describe(pods []corev1.Pod) string {
	out := ""
	for _, p := range pods {
		out += fmt.Sprintf(" %s@%q(ready %v)", p.Name, p.Spec.NodeName, countReady([]corev1.Pod{p}) == 1)
	}
	return out
}
