package operator

import (
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// chargeWatch polls one operator's NodeInfo of a node every millisecond or two and keeps
// every sample whose requested CPU (millicores) or pod count differs from want.
type chargeWatch struct {
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	samples int
	off     []string
}

func watchCharge(op *running, node string, wantMilliCPU, wantPods int64) *chargeWatch {
	w := &chargeWatch{stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(time.Millisecond):
			}
			info, ok := op.Cache.NodeInfo(node)
			w.mu.Lock()
			w.samples++
			if !ok || info.Requested.MilliCPU != wantMilliCPU || info.Requested.Pods != wantPods {
				got := "no node"
				if ok {
					got = fmt.Sprintf("%dm %d pods", info.Requested.MilliCPU, info.Requested.Pods)
				}
				if len(w.off) < 10 {
					w.off = append(w.off, fmt.Sprintf("%s: %s", time.Now().Format("15:04:05.000"), got))
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// check stops the watch and fails the test if any sample was off.
func (w *chargeWatch) check(t *testing.T, what string) {
	t.Helper()
	close(w.stop)
	w.done.Wait()
	if len(w.off) > 0 {
		t.Errorf("%s: the node's charge moved in %d of %d samples: %v", what, len(w.off), w.samples, w.off)
	}
	t.Logf("%s: %d samples of the node's charge, none off", what, w.samples)
}

// charged waits until op's cache charges node with requested and reserved CPU.
func charged(op *running, node string, requested, reserved int64) func() (bool, string) {
	return func() (bool, string) {
		info, ok := op.Cache.NodeInfo(node)
		if !ok {
			return false, "node not cached"
		}
		return info.Requested.MilliCPU == requested && info.Reserved.MilliCPU == reserved,
			fmt.Sprintf("requested %dm reserved %dm", info.Requested.MilliCPU, info.Reserved.MilliCPU)
	}
}

// reservationPhase waits until the API's Reservation key is in phase (and, for Matched, owned
// by owner).
func reservationPhase(key types.NamespacedName, phase v1alpha1.ReservationPhase, owner string) func() (bool, string) {
	return func() (bool, string) {
		r := &v1alpha1.Reservation{}
		if err := env.Client.Get(ctx(), key, r); err != nil {
			return false, err.Error()
		}
		ok := r.Status.Phase == phase && (owner == "" || (r.Status.CurrentOwner != nil && r.Status.CurrentOwner.Name == owner))
		return ok, fmt.Sprintf("%+v", r.Status)
	}
}

// replacementPod is a pod of ReplicaSet rs of revision hash, created unbound and bound to
// node through the binding subresource, as a scheduler does.
func replacementPod(t *testing.T, ns, name, hash, node string, rs *appsv1.ReplicaSet, opts ...ts.PodOption) *corev1.Pod {
	t.Helper()
	pod := ts.MakePod(ns, name, append([]ts.PodOption{ts.Requests("2", "4Gi"), ts.WithLabels("app", "web", "pod-template-hash", hash),
		ts.OwnedBy("ReplicaSet", rs.Name, string(rs.UID))}, opts...)...)
	create(t, pod)
	bind(t, pod, node)
	return pod
}

// TestReserveOnDelete_DeletedPodsPlaceKeptAndTakenByItsReplacement: a pod whose
// ReplicaSet is annotated reserve-on-delete is deleted; the node stays charged exactly as
// before the whole time (sampled every millisecond or two); the leader creates the
// Reservation (same node, the pod's requests, the owner's pods, owned by the ReplicaSet);
// the replacement consumes it and the node ends as it was.
func TestReserveOnDelete_DeletedPodsPlaceKeptAndTakenByItsReplacement(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationTTL = time.Minute })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	rs := replicaSet(ns, "web", map[string]string{"app": "web"})
	rs.Annotations = map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}
	rs.Spec.Replicas = ptr.To[int32](1) // it wants its pod back: a replacement is coming
	create(t, rs)
	eventually(t, "the cache holds the annotated ReplicaSet", func() (bool, string) {
		_, ok := lastSeenOwner(op.Cache, ownerKeyOf(ns, "web"))
		return ok, "not yet"
	})
	old := replacementPod(t, ns, "web-a", "v1", node, rs)
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))

	watch := watchCharge(op, node, 2000, 1)
	deleteNow(t, old)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(old)}
	eventually(t, "the leader's Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	eventually(t, "the Reservation took the hold over", func() (bool, string) {
		v, ok := op.Cache.Reservation(key)
		return ok && !v.Provisional, fmt.Sprintf("%+v", v)
	})
	r := &v1alpha1.Reservation{}
	if err := env.Client.Get(ctx(), key, r); err != nil {
		t.Fatal(err)
	}
	if r.Spec.NodeName != node || r.Spec.Resources.Cpu().MilliValue() != 2000 || r.Spec.Resources.Memory().Value() != 4<<30 ||
		len(r.Spec.PodSelector.MatchLabels) != 1 || r.Spec.PodSelector.MatchLabels["app"] != "web" || ptr.Deref(r.Spec.TTLSeconds, 0) != 60 {
		t.Errorf("Reservation spec %+v, want the pod's node and requests, app=web, 60s", r.Spec)
	}
	if refs := r.OwnerReferences; len(refs) != 1 || refs[0].UID != rs.UID || refs[0].Kind != "ReplicaSet" {
		t.Errorf("owner references %+v, want the ReplicaSet (garbage collection)", refs)
	}
	if r.Annotations[v1alpha1.ReplacesPodAnnotation] != "web-a" {
		t.Errorf("annotations %v, want the replaced pod named", r.Annotations)
	}

	replacementPod(t, ns, "web-b", "v2", node, rs)
	eventually(t, "the replacement consumed the Reservation", reservationPhase(key, v1alpha1.ReservationMatched, "web-b"))
	eventually(t, "nothing counted twice", charged(op, node, 2000, 0))
	watch.check(t, "delete, hold, Reservation, replacement")
	if errs := op.Cache.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// TestReserveOnDelete_PlaceReleasedAtTheTTLWithoutAReplacement: the pod's own annotation
// keeps its place; with no replacement the node stays charged until --reservation-ttl from
// the deletion and is released then.
func TestReserveOnDelete_PlaceReleasedAtTheTTLWithoutAReplacement(t *testing.T) {
	const ttl = 4 * time.Second
	op := startOperator(t, func(o *Options) { o.ReservationTTL = ttl })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	pod := ts.MakePod(ns, "solo", ts.OnNode(node), ts.Requests("2", "4Gi"), ts.WithLabels("app", "solo"),
		ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"))
	create(t, pod)
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))

	watch := watchCharge(op, node, 2000, 1)
	deleted := time.Now()
	deleteNow(t, pod)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(pod)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	// Charged until the TTL (less the second the deletion time is truncated to).
	time.Sleep(time.Until(deleted.Add(ttl - 1200*time.Millisecond)))
	watch.check(t, "until the TTL")
	eventually(t, "the Reservation expired", reservationPhase(key, v1alpha1.ReservationExpired, ""))
	eventually(t, "the place is released", charged(op, node, 0, 0))
	if took := time.Since(deleted); took < ttl-time.Second {
		t.Errorf("released %v after the deletion, before the TTL %v", took, ttl)
	}
}

// TestReserveOnDelete_RestartsLoseNothingAndChargeNothingTwice: the operator restarts after
// the Reservation was created (the new one charges the place at once, same deadline), and
// again after a replacement came while it was down (it charges the replacement only).
func TestReserveOnDelete_RestartsLoseNothingAndChargeNothingTwice(t *testing.T) {
	opts := func(o *Options) { o.ReservationTTL = 10 * time.Minute }
	op := startOperator(t, opts)
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	rs := replicaSet(ns, "web", map[string]string{"app": "web"})
	rs.Spec.Template.Annotations = map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}
	rs.Spec.Replicas = ptr.To[int32](1)
	create(t, rs)
	old := replacementPod(t, ns, "web-a", "v1", node, rs, ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"))
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))
	deleteNow(t, old)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(old)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	before, _ := op.Cache.Reservation(key)
	op.stop(t)

	op = startOperator(t, opts)
	if ok, msg := charged(op, node, 2000, 2000)(); !ok {
		t.Errorf("caught up after a restart, the place is not charged once: %s", msg)
	}
	if v, _ := op.Cache.Reservation(key); !v.ExpiresAt.Equal(before.ExpiresAt) || !v.ReservedAt.Equal(before.ReservedAt) {
		t.Errorf("after a restart reserved %v expires %v, want %v %v", v.ReservedAt, v.ExpiresAt, before.ReservedAt, before.ExpiresAt)
	}
	op.stop(t)

	replacementPod(t, ns, "web-b", "v2", node, rs) // while no operator runs
	op = startOperator(t, opts)
	if ok, msg := charged(op, node, 2000, 0)(); !ok {
		t.Errorf("caught up after a restart, the replacement and its Reservation are not charged once: %s", msg)
	}
	eventually(t, "the replacement's match is recorded", reservationPhase(key, v1alpha1.ReservationMatched, "web-b"))
	op.stop(t)

	op = startOperator(t, opts)
	if ok, msg := charged(op, node, 2000, 0)(); !ok {
		t.Errorf("caught up after a third start: %s", msg)
	}
	if errs := op.Cache.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
	if holds := op.Cache.ReservationHolds(); len(holds) != 0 {
		t.Errorf("holds after the restarts: %v", holds)
	}
}

// TestReserveOnDelete_BadAnnotationKeepsNothingAndIsCounted: a value that is not a boolean
// keeps nothing; it is counted (and logged with what to set).
func TestReserveOnDelete_BadAnnotationKeepsNothingAndIsCounted(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	before := reserveOnDeleteCount(t, "invalid_annotation")
	pod := ts.MakePod(ns, "bad", ts.OnNode(node), ts.Requests("2", "4Gi"), ts.WithLabels("app", "bad"),
		ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "yes please"))
	create(t, pod)
	eventually(t, "the pod is charged", charged(op, node, 2000, 0))
	deleteNow(t, pod)
	eventually(t, "the place is not kept", charged(op, node, 0, 0))
	if got := reserveOnDeleteCount(t, "invalid_annotation"); got != before+1 {
		t.Errorf("invalid_annotation counted %v times, want once", got-before)
	}
	if holds := op.Cache.ReservationHolds(); len(holds) != 0 {
		t.Errorf("holds %v", holds)
	}
}

func reserveOnDeleteCount(t *testing.T, result string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.ReserveOnDeleteTotal.WithLabelValues(result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestReserveOnDelete_LeaderAndStandbyKeepThePlaceAlike: with two replicas, both caches keep
// the place from the delete on (sampled throughout), the leader creates the one
// Reservation, and both take it over with the same deadline.
func TestReserveOnDelete_LeaderAndStandbyKeepThePlaceAlike(t *testing.T) {
	ns := newNamespace(t)
	lease := func(name string) func(*Options) {
		return func(o *Options) {
			o.LeaderElect, o.LeaderElectionID, o.LeaderElectionNamespace = true, "lease-"+ns, ns
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = ptr.To(3*time.Second), ptr.To(2*time.Second), ptr.To(200*time.Millisecond)
			o.ComponentName, o.ReservationTTL = name, time.Minute
		}
	}
	a := startOperator(t, lease("mc-a"))
	eventually(t, "a leads", func() (bool, string) { return elected(a), "not elected" })
	b := startOperator(t, lease("mc-b"))
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	pod := ts.MakePod(ns, "web-a", ts.OnNode(node), ts.Requests("2", "4Gi"), ts.WithLabels("app", "web"),
		ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"))
	create(t, pod)
	eventually(t, "the leader charges the pod", charged(a, node, 2000, 0))
	eventually(t, "the standby charges the pod", charged(b, node, 2000, 0))

	watchA, watchB := watchCharge(a, node, 2000, 1), watchCharge(b, node, 2000, 1)
	deleteNow(t, pod)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(pod)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	for name, op := range map[string]*running{"leader": a, "standby": b} {
		eventually(t, "the "+name+" took the hold over", func() (bool, string) {
			v, ok := op.Cache.Reservation(key)
			return ok && !v.Provisional, fmt.Sprintf("%+v", v)
		})
	}
	va, _ := a.Cache.Reservation(key)
	vb, _ := b.Cache.Reservation(key)
	if !va.ReservedAt.Equal(vb.ReservedAt) || !va.ExpiresAt.Equal(vb.ExpiresAt) {
		t.Errorf("leader reserved %v expires %v, standby %v %v", va.ReservedAt, va.ExpiresAt, vb.ReservedAt, vb.ExpiresAt)
	}
	list := &v1alpha1.ReservationList{}
	if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("reservations in the namespace: %d (%v), want the one", len(list.Items), err)
	}
	watchA.check(t, "leader")
	watchB.check(t, "standby")
}
