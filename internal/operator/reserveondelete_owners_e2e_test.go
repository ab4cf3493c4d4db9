package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// Reserve-on-delete decided from the owner, through the real API server (no controllers
// run: the tests create and bind the pods a ReplicaSet, StatefulSet or DaemonSet
// controller would).

// annotatedReplicaSet creates ReplicaSet name annotated reserve-on-delete, wanting n pods,
// and waits until op's cache holds it with that count.
func annotatedReplicaSet(t *testing.T, op *running, ns, name string, n int32) *appsv1.ReplicaSet {
	t.Helper()
	rs := replicaSet(ns, name, map[string]string{"app": name})
	rs.Annotations = map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}
	rs.Spec.Replicas = ptr.To(n)
	create(t, rs)
	ownerSeen(t, op, v1alpha1.OwnerReplicaSet, ns, name, n)
	return rs
}

// ownerSeen waits until op's cache holds the owner with n replicas (n < 0: any).
func ownerSeen(t *testing.T, op *running, typ v1alpha1.OwnerType, ns, name string, n int32) {
	t.Helper()
	key := ownerKeyOf(ns, name)
	key.Type = typ
	eventually(t, fmt.Sprintf("the cache holds %s %s wanting %d", typ, name, n), func() (bool, string) {
		o, ok := lastSeenOwner(op.Cache, key)
		if !ok {
			return false, "not yet"
		}
		return n < 0 || (o.Replicas != nil && *o.Replicas == n), fmt.Sprintf("replicas %v", o.Replicas)
	})
}

// ownedPod creates a 2-CPU pod controlled by owner (kind, name, uid) with labels, bound to
// node through the binding subresource, as a scheduler does.
func ownedPod(t *testing.T, ns, name, node, kind, owner string, uid types.UID, labels ...string) *corev1.Pod {
	t.Helper()
	pod := ts.MakePod(ns, name, ts.Requests("2", "4Gi"), ts.WithLabels(labels...), ts.OwnedBy(kind, owner, string(uid)))
	create(t, pod)
	bind(t, pod, node)
	return pod
}

// noReservations checks that no Reservation exists in ns and no hold in op's cache.
func noReservations(t *testing.T, op *running, ns string) {
	t.Helper()
	list := &v1alpha1.ReservationList{}
	if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Errorf("reservations in the namespace: %d (%v), want none", len(list.Items), err)
	}
	if holds := op.Cache.ReservationHolds(); len(holds) != 0 {
		t.Errorf("holds %v, want none", holds)
	}
}

// TestReserveOnDelete_AReplacementThatLandedFirstTakesThePlace: ReplicaSet of 1, web-a
// (2 CPU) then web-b (2 CPU) on one node, web-a deleted: the node ends at 2 CPU requested
// and stays there; nothing is held (not_needed).
func TestReserveOnDelete_AReplacementThatLandedFirstTakesThePlace(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationTTL = time.Minute })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	rs := annotatedReplicaSet(t, op, ns, "web", 1)
	a := ownedPod(t, ns, "web-a", node, "ReplicaSet", rs.Name, rs.UID, "app", "web", "pod-template-hash", "v1")
	ownedPod(t, ns, "web-b", node, "ReplicaSet", rs.Name, rs.UID, "app", "web", "pod-template-hash", "v2")
	eventually(t, "both pods are charged", charged(op, node, 4000, 0))
	before := reserveOnDeleteCount(t, "not_needed")

	deleteNow(t, a)
	eventually(t, "the node is at 2 CPU", charged(op, node, 2000, 0))
	watch := watchCharge(op, node, 2000, 1)
	time.Sleep(time.Second) // samples that it stays there
	watch.check(t, "after the delete")
	noReservations(t, op, ns)
	if got := reserveOnDeleteCount(t, "not_needed"); got != before+1 {
		t.Errorf("not_needed counted %v times, want once", got-before)
	}
}

// TestReserveOnDelete_AScaleDownKeepsNoPlace: ReplicaSet scaled from 2 to 1, one pod
// deleted: the node ends at 2 CPU and stays there.
func TestReserveOnDelete_AScaleDownKeepsNoPlace(t *testing.T) {
	op, ns, node, rs, a := twoOfTwo(t, time.Minute)
	scale(t, rs, 1)
	ownerSeen(t, op, v1alpha1.OwnerReplicaSet, ns, "web", 1)

	deleteNow(t, a)
	eventually(t, "the node is at 2 CPU", charged(op, node, 2000, 0))
	watch := watchCharge(op, node, 2000, 1)
	time.Sleep(time.Second)
	watch.check(t, "after the delete")
	noReservations(t, op, ns)
}

// TestReserveOnDelete_AScaleDownAfterTheHoldReleasesIt: ReplicaSet of 2 loses a pod (a
// place is kept: it wants a replacement), then is scaled to 1: the place is released, the
// Reservation ends Expired with an Event saying why.
func TestReserveOnDelete_AScaleDownAfterTheHoldReleasesIt(t *testing.T) {
	op, ns, node, rs, a := twoOfTwo(t, 10*time.Minute)
	before := reserveOnDeleteCount(t, "released_scale_down")
	// Times are whole seconds (the API's): web-b landed in an earlier second than the
	// deletion, or it would count as the replacement (it landed "since" the deletion).
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))

	deleteNow(t, a)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(a)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	eventually(t, "web-b and the place are charged", charged(op, node, 4000, 2000))

	scaled := time.Now()
	scale(t, rs, 1)
	eventually(t, "the place is released", charged(op, node, 2000, 0))
	t.Logf("released %v after the owner update", time.Since(scaled))
	expectReleasedScaleDown(t, ns, key, before)
}

// TestReserveOnDelete_StatefulSetPodReplacedUnderItsName: a StatefulSet pod deleted and
// created again under the same name keeps exactly one place, with no gap and no double
// charge.
func TestReserveOnDelete_StatefulSetPodReplacedUnderItsName(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationTTL = time.Minute })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, Template: podTemplate("db")},
	}
	create(t, sts)
	ownerSeen(t, op, v1alpha1.OwnerStatefulSet, ns, "db", 1)
	labels := []string{"app", "db", "statefulset.kubernetes.io/pod-name", "db-0"}
	old := ownedPod(t, ns, "db-0", node, "StatefulSet", "db", sts.UID, labels...)
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))

	watch := watchCharge(op, node, 2000, 1)
	deleteNow(t, old)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(old)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	ownedPod(t, ns, "db-0", node, "StatefulSet", "db", sts.UID, labels...)
	eventually(t, "the new db-0 consumed the place", reservationPhase(key, v1alpha1.ReservationMatched, "db-0"))
	eventually(t, "nothing counted twice", charged(op, node, 2000, 0))
	watch.check(t, "StatefulSet pod replaced")
}

// TestReserveOnDelete_DaemonSetPodReplacedOnItsNode: a DaemonSet pod deleted and replaced
// on its node keeps exactly one place, with no gap and no double charge.
func TestReserveOnDelete_DaemonSetPodReplacedOnItsNode(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationTTL = time.Minute })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent", Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: podTemplate("agent")},
	}
	create(t, ds)
	ownerSeen(t, op, v1alpha1.OwnerDaemonSet, ns, "agent", -1)
	old := ownedPod(t, ns, "agent-x", node, "DaemonSet", "agent", ds.UID, "app", "agent")
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))

	watch := watchCharge(op, node, 2000, 1)
	deleteNow(t, old)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(old)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	ownedPod(t, ns, "agent-y", node, "DaemonSet", "agent", ds.UID, "app", "agent")
	eventually(t, "agent-y consumed the place", reservationPhase(key, v1alpha1.ReservationMatched, "agent-y"))
	eventually(t, "nothing counted twice", charged(op, node, 2000, 0))
	watch.check(t, "DaemonSet pod replaced")
}

// twoOfTwo starts an operator (reservation TTL ttl) and a ReplicaSet web wanting 2, with
// web-a and web-b (2 CPU each) charged on a node of their own; it returns web-a.
func twoOfTwo(t *testing.T, ttl time.Duration) (op *running, ns, node string, rs *appsv1.ReplicaSet, a *corev1.Pod) {
	t.Helper()
	op = startOperator(t, func(o *Options) { o.ReservationTTL = ttl })
	ns = newNamespace(t)
	node = "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	rs = annotatedReplicaSet(t, op, ns, "web", 2)
	a = ownedPod(t, ns, "web-a", node, "ReplicaSet", rs.Name, rs.UID, "app", "web")
	ownedPod(t, ns, "web-b", node, "ReplicaSet", rs.Name, rs.UID, "app", "web")
	eventually(t, "both pods are charged", charged(op, node, 4000, 0))
	return op, ns, node, rs, a
}

// scale sets a ReplicaSet's spec.replicas.
func scale(t *testing.T, rs *appsv1.ReplicaSet, n int32) {
	t.Helper()
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(rs), rs); err != nil {
		t.Fatal(err)
	}
	rs.Spec.Replicas = ptr.To(n)
	if err := env.Client.Update(ctx(), rs); err != nil {
		t.Fatal(err)
	}
}

// podTemplate is a minimal pod template labelled app=app.
func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// eventSaying waits for an Event regarding Reservation name whose note contains text.
func eventSaying(ns, name, text string) func() (bool, string) {
	return func() (bool, string) {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Reservation" && e.Regarding.Name == name {
				notes = append(notes, e.Reason+": "+e.Note)
				if strings.Contains(e.Note, text) {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("events %v", notes)
	}
}

// expectReleasedScaleDown waits for the replacement Reservation key to end Expired as a
// scale-down release: counted once more than before, and an Event saying so.
func expectReleasedScaleDown(t *testing.T, ns string, key types.NamespacedName, before float64) {
	t.Helper()
	eventually(t, "the Reservation ended", reservationPhase(key, v1alpha1.ReservationExpired, ""))
	if got := reserveOnDeleteCount(t, "released_scale_down"); got < before+1 {
		t.Errorf("released_scale_down not counted")
	}
	eventually(t, "an Event says why it ended", eventSaying(ns, key.Name, "released"))
}
