package e2e

import (
	"context"
	"fmt"
	"strings"
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
// replacement kube-controller-manager creates. The replacement carries a scheduling gate
// (as the pod template says) so that the kept place stands empty for a while: the
// unrelated pod is turned away from it, by the room kept for others, and never bound.
// Once the gate is lifted, the replacement lands on the kept node.
func TestHolds_AnUnrelatedPodNeverTakesAKeptPlaceAndTheReplacementLandsOnIt(t *testing.T) {
	ctx := context.Background()
	const ns, scenario = "holds", "holds"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, "holds-1", scenario, "2")
	addNode(ctx, t, "holds-2", scenario, "2")

	labels := map[string]string{"app": "web"}
	spec := podSpec(scenario, "1500m")
	spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: gate}}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec:       spec,
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the Deployment's two pods created", func() (bool, string) {
		pods := podsOf(ctx, t, ns, labels)
		return len(pods) == 2, fmt.Sprintf("%d pods", len(pods))
	})
	for _, p := range podsOf(ctx, t, ns, labels) {
		ungate(ctx, t, &p)
	}
	eventually(t, 60*time.Second, "both Deployment pods bound, one per node", func() (bool, string) {
		pods := podsOf(ctx, t, ns, labels)
		n, where := bound(pods)
		return n == 2 && len(pods) == 2 && pods[0].Spec.NodeName != pods[1].Spec.NodeName, where
	})

	createPod(ctx, t, ns, "intruder", scenario, "1500m", map[string]string{"app": "intruder"})
	eventually(t, 30*time.Second, "the unrelated pod found no room", func() (bool, string) {
		ok, msg := unschedulable(ctx, t, ns, "intruder")
		return ok, msg
	})

	victim := podsOf(ctx, t, ns, labels)[0]
	kept := victim.Spec.NodeName
	if err := env.Client.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	intruderPending := func() (bool, string) {
		n := nodeOf(ctx, t, ns, "intruder")
		return n != "", fmt.Sprintf("the unrelated pod was bound to %s (the kept place of %s is on %s)", n, victim.Name, kept)
	}
	var replacement *corev1.Pod
	eventually(t, 30*time.Second, "the unrelated pod turned away by the kept place", func() (bool, string) {
		if bad, why := intruderPending(); bad {
			t.Fatal(why)
		}
		_, msg := unschedulable(ctx, t, ns, "intruder")
		return strings.Contains(msg, "kept for others"), msg
	})
	never(t, 3*time.Second, "the unrelated pod stays pending while the place is kept", intruderPending)
	for _, p := range podsOf(ctx, t, ns, labels) {
		if p.Name != victim.Name && p.Spec.NodeName == "" {
			replacement = &p
		}
	}
	if replacement == nil {
		t.Fatal("kube-controller-manager created no replacement")
	}
	ungate(ctx, t, replacement)
	eventually(t, 60*time.Second, "the replacement bound to the kept node", func() (bool, string) {
		if bad, why := intruderPending(); bad {
			t.Fatal(why)
		}
		n := nodeOf(ctx, t, ns, replacement.Name)
		return n == kept, fmt.Sprintf("on %q", n)
	})
	never(t, 2*time.Second, "the unrelated pod stays pending", intruderPending)
	t.Logf("%s was deleted on %s; its replacement %s landed there; the unrelated pod waits", victim.Name, kept, replacement.Name)
}

// gate holds the Deployment's pods back from scheduling until the test lifts it.
const gate = "e2e.multicache.dev/gate"

// ungate lifts the pod's scheduling gates.
func ungate(ctx context.Context, t *testing.T, p *corev1.Pod) {
	t.Helper()
	patch := client.MergeFrom(p.DeepCopy())
	p.Spec.SchedulingGates = nil
	if err := env.Client.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
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
