package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// TestLeaving_AReplacementCreatedWhileItsPredecessorTerminatesLandsOnItsNode: a kubelet takes
// up to the pod's grace period to stop a deleted pod, and its ReplicaSet creates the
// replacement at once. The replacement is scheduled while the old pod still terminates,
// before any place is kept: it must still prefer the node whose place will be kept for it,
// where kube-scheduler's own scores prefer an emptier node. The old pod here is held
// terminating by a finalizer (no kubelet runs), on a node busier than the empty one.
func TestLeaving_AReplacementCreatedWhileItsPredecessorTerminatesLandsOnItsNode(t *testing.T) {
	ctx := context.Background()
	const ns, scenario = "leaving", "leaving"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, "leaving-1", scenario, "4")

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
				Spec:       podSpec(scenario, "500m"),
			}},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the Deployment's pod bound to leaving-1", func() (bool, string) {
		n, where := bound(podsOf(ctx, t, ns, labels))
		return n == 1, where
	})
	// A busy neighbour on leaving-1, then an empty node: kube-scheduler's own scores
	// (least allocated, balanced) prefer leaving-2 from now on.
	createPod(ctx, t, ns, "neighbour", scenario, "2", map[string]string{"app": "neighbour"})
	eventually(t, 30*time.Second, "the neighbour bound", func() (bool, string) {
		n := nodeOf(ctx, t, ns, "neighbour")
		return n == "leaving-1", fmt.Sprintf("on %q", n)
	})
	addNode(ctx, t, "leaving-2", scenario, "4")

	victim := podsOf(ctx, t, ns, labels)[0]
	const finalizer = "e2e.multicache.dev/terminating"
	patch := client.MergeFrom(victim.DeepCopy())
	victim.Finalizers = append(victim.Finalizers, finalizer)
	if err := env.Client.Patch(ctx, &victim, patch); err != nil {
		t.Fatal(err)
	}
	defer func() {
		var p corev1.Pod
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), &p); err == nil {
			patch := client.MergeFrom(p.DeepCopy())
			p.Finalizers = nil
			_ = env.Client.Patch(ctx, &p, patch)
		}
	}()
	if err := env.Client.Delete(ctx, &victim); err != nil {
		t.Fatal(err)
	}
	var replacement string
	eventually(t, 60*time.Second, "the replacement bound while its predecessor terminates", func() (bool, string) {
		for _, p := range podsOf(ctx, t, ns, labels) {
			if p.Name != victim.Name && p.Spec.NodeName != "" {
				replacement = p.Name
				return true, ""
			}
		}
		return false, bound2(podsOf(ctx, t, ns, labels))
	})
	if n := nodeOf(ctx, t, ns, replacement); n != "leaving-1" {
		t.Fatalf("the replacement %s of %s (still terminating on leaving-1, its place to be kept) landed on %s", replacement, victim.Name, n)
	}

	// The predecessor goes: its replacement is there already, so no room stays held for
	// nobody (no Reservation, or one the replacement consumed).
	patch = client.MergeFrom(victim.DeepCopy())
	victim.Finalizers = nil
	if err := env.Client.Patch(ctx, &victim, patch); err != nil {
		t.Fatal(err)
	}
	never(t, 3*time.Second, "no room held for nobody once the predecessor is gone", func() (bool, string) {
		var list v1alpha1.ReservationList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Items {
			if r.Status.Phase != v1alpha1.ReservationMatched {
				return true, fmt.Sprintf("Reservation %s is %q on %q", r.Name, r.Status.Phase, r.Spec.NodeName)
			}
		}
		return false, ""
	})
}

// bound2 describes where pods are and whether they terminate.
func bound2(pods []corev1.Pod) string {
	_, where := bound(pods)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			where += " " + p.Name + " terminating"
		}
	}
	return where
}
