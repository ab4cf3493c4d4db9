package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// TestReservation_UnrelatedPodsNeverOvercommitItAndItsOwnerConsumesIt: a Reservation keeps
// 2 of a node's 4 CPUs for app=db. Three unrelated pods of 1 CPU arrive: two fit beside the
// reservation, the third waits, though the node has the room. Then a db pod of 2 CPU
// arrives and takes the reserved room on that node.
func TestReservation_UnrelatedPodsNeverOvercommitItAndItsOwnerConsumesIt(t *testing.T) {
	ctx := context.Background()
	const ns, scenario, node = "rsv", "rsv", "rsv-1"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, node, scenario, "4")

	rsv := &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-slot"},
		Spec: v1alpha1.ReservationSpec{
			NodeName:    node,
			Resources:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	if err := env.Client.Create(ctx, rsv); err != nil {
		t.Fatal(err)
	}
	// The status writer runs in the scheduler that leads: the cache charged the room.
	eventually(t, 30*time.Second, "the reservation is Reserved", func() (bool, string) {
		return phaseOf(ctx, t, rsv) == v1alpha1.ReservationReserved, string(phaseOf(ctx, t, rsv))
	})

	others := map[string]string{"app": "batch"}
	for i := range 3 {
		createPod(ctx, t, ns, fmt.Sprintf("batch-%d", i), scenario, "1", others)
	}
	eventually(t, 30*time.Second, "two unrelated pods bound beside the reservation", func() (bool, string) {
		n, where := bound(podsOf(ctx, t, ns, others))
		return n == 2, where
	})
	never(t, 3*time.Second, "the third unrelated pod stays pending", func() (bool, string) {
		n, where := bound(podsOf(ctx, t, ns, others))
		return n > 2, "overcommitted the reservation:" + where
	})

	createPod(ctx, t, ns, "db-0", scenario, "2", map[string]string{"app": "db"})
	eventually(t, 30*time.Second, "the owner bound on the reserved node", func() (bool, string) {
		n := nodeOf(ctx, t, ns, "db-0")
		return n == node, fmt.Sprintf("on %q", n)
	})
	eventually(t, 30*time.Second, "the reservation is Matched", func() (bool, string) {
		return phaseOf(ctx, t, rsv) == v1alpha1.ReservationMatched, string(phaseOf(ctx, t, rsv))
	})
	if n, where := bound(podsOf(ctx, t, ns, others)); n != 2 {
		t.Errorf("unrelated pods bound: %d (%s), want 2", n, where)
	}
}

func phaseOf(ctx context.Context, t *testing.T, rsv *v1alpha1.Reservation) v1alpha1.ReservationPhase {
	t.Helper()
	var got v1alpha1.Reservation
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rsv), &got); err != nil {
		t.Fatal(err)
	}
	return got.Status.Phase
}

// TestReservation_AReleasedPlaceGoesToThePodItTurnedAway: a pod turned away by a
// Reservation's room is tried again as soon as the Reservation is gone, though
// kube-scheduler sees no event of its own for that.
func TestReservation_AReleasedPlaceGoesToThePodItTurnedAway(t *testing.T) {
	ctx := context.Background()
	const ns, scenario, node = "rsv-released", "rsv-released", "rsv-released-1"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, node, scenario, "2")
	rsv := &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slot"},
		Spec: v1alpha1.ReservationSpec{
			NodeName:    node,
			Resources:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	if err := env.Client.Create(ctx, rsv); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the reservation is Reserved", func() (bool, string) {
		return phaseOf(ctx, t, rsv) == v1alpha1.ReservationReserved, string(phaseOf(ctx, t, rsv))
	})
	createPod(ctx, t, ns, "waiter", scenario, "1", map[string]string{"app": "batch"})
	eventually(t, 30*time.Second, "the pod turned away by the kept room", func() (bool, string) {
		_, msg := unschedulable(ctx, t, ns, "waiter")
		return strings.Contains(msg, "kept for others"), msg
	})
	if err := env.Client.Delete(ctx, rsv); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the pod bound once the reservation is gone", func() (bool, string) {
		n := nodeOf(ctx, t, ns, "waiter")
		return n == node, fmt.Sprintf("on %q", n)
	})
}
