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

// TestHolds_AnUnrelatedPodNeverTakesAKeptPlaceAndTheReplacementLandsOnIt: a Deployment of
// two pods annotated reserve-on-delete fills two nodes; an unrelated pod waits for room.
// One Deployment pod is deleted: its node has room again, but multicache keeps it for the
// replacement kube-controller-manager creates. The unrelated pod is never bound there; the
// replacement lands on the kept node.
func TestHolds_AnUnrelatedPodNeverTakesAKeptPlaceAndTheReplacementLandsOnIt(t *testing.T) {
	ctx := context.Background()
	const ns, scenario = "holds", "holds"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, "holds-1", scenario, "2")
	addNode(ctx, t, "holds-2", scenario, "2")

	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec:       podSpec(scenario, "1500m"),
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "both Deployment pods bound, one per node", func() (bool, string) {
		pods := podsOf(ctx, t, ns, labels)
		n, where := bound(pods)
		return n == 2 && len(pods) == 2 && pods[0].Spec.NodeName != pods[1].Spec.NodeName, where
	})

	createPod(ctx, t, ns, "intruder", scenario, "1500m", map[string]string{"app": "intruder"})
	eventually(t, 30*time.Second, "the unrelated pod found no room", func() (bool, string) {
		return unschedulable(ctx, t, ns, "intruder")
	})

	victim := podsOf(ctx, t, ns, labels)[0]
	kept := victim.Spec.NodeName
	if err := env.Client.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	var replacement string
	eventually(t, 60*time.Second, "the replacement bound", func() (bool, string) {
		if n := nodeOf(ctx, t, ns, "intruder"); n != "" {
			t.Fatalf("the unrelated pod was bound to %s: into the kept place of %s on %s", n, victim.Name, kept)
		}
		for _, p := range podsOf(ctx, t, ns, labels) {
			if p.Name != victim.Name && p.Spec.NodeName == kept {
				replacement = p.Name
				return true, ""
			}
		}
		_, where := bound(podsOf(ctx, t, ns, labels))
		return false, where
	})
	never(t, 3*time.Second, "the unrelated pod stays pending", func() (bool, string) {
		n := nodeOf(ctx, t, ns, "intruder")
		return n != "", fmt.Sprintf("bound to %s", n)
	})
	t.Logf("%s was deleted on %s; its replacement %s landed there; the unrelated pod waits", victim.Name, kept, replacement)
}

// unschedulable reports whether the scheduler marked a pod unschedulable.
func unschedulable(ctx context.Context, t *testing.T, ns, name string) (bool, string) {
	t.Helper()
	var p corev1.Pod
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true, c.Message
		}
	}
	return false, fmt.Sprintf("node %q, conditions %v", p.Spec.NodeName, p.Status.Conditions)
}
