package reservationstore_test

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const holdTTL = 5 * time.Minute

// cluster is a handler with node n1 (8 CPU) and the clock it runs on.
type cluster struct {
	t   *testing.T
	h   *handler.Handler
	clk *clocktesting.FakeClock
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	cfg, err := stores.NewCacheHandler(stores.Config{Clock: clk, ReservationTTL: holdTTL, ReservationDefaultTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, h: handler.New(cfg, logr.Discard()), clk: clk}
	c.must(c.h.Add(ts.MakeNode("n1", "8", "16Gi")))
	return c
}

func (c *cluster) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// sync is the pod feed reporting what the API holds of a pod (nil: gone).
func (c *cluster) sync(key types.NamespacedName, pod *corev1.Pod) {
	c.t.Helper()
	c.must(c.h.Sync(key, pod, true, handler.Current))
}

// expect checks n1's requested and reserved CPU (millicores) and every invariant.
func (c *cluster) expect(what string, requested, reserved int64) {
	c.t.Helper()
	info, _ := c.h.NodeInfo("n1")
	if info.Requested.MilliCPU != requested || info.Reserved.MilliCPU != reserved || info.Requested.Pods != 1 {
		c.t.Errorf("%s: n1 requested %dm (%d pods) reserved %dm, want %dm (1 pod) and %dm",
			what, info.Requested.MilliCPU, info.Requested.Pods, info.Reserved.MilliCPU, requested, reserved)
	}
	for _, err := range c.h.CheckInvariants() {
		c.t.Errorf("%s: invariant: %v", what, err)
	}
}

// view returns the cache's view of a reservation or hold.
func (c *cluster) view(key types.NamespacedName) store.Reservation {
	c.t.Helper()
	v, ok := c.h.Reservation(key)
	if !ok {
		c.t.Fatalf("no reservation or hold %s", key)
	}
	return v
}

// web is a pod of ReplicaSet web-rs on n1, of revision hash, scheduled at scheduled.
func web(name, hash string, scheduled time.Time, opts ...ts.PodOption) *corev1.Pod {
	return ts.MakePod("ns", name, append([]ts.PodOption{
		ts.OnNode("n1"), ts.Requests("2", "4Gi"), ts.WithLabels("app", "web", "pod-template-hash", hash),
		ts.OwnedBy("ReplicaSet", "web-rs", "rs-uid"), ts.CreatedAt(scheduled), ts.ScheduledAt(scheduled),
	}, opts...)...)
}

func kept() ts.PodOption {
	return ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true")
}

// created is the Reservation the leader creates for a hold, as the API serves it at t.
func created(v store.Reservation, t time.Time) *v1alpha1.Reservation {
	r := v.Reservation.DeepCopy()
	r.UID = "uid-" + types.UID(r.Name)
	r.CreationTimestamp = metav1.NewTime(t.Truncate(time.Second))
	return r
}

func TestReserveOnDelete_PlaceKeptThenTakenOverThenConsumedWithoutGapOrDoubleCharge(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.expect("running", 2000, 0)

	c.clk.Step(10 * time.Second)
	c.sync(store.PodKey(old), nil)
	c.expect("deleted: the hold keeps the charge", 2000, 2000)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	hold := c.view(key)
	if !hold.Provisional || hold.Phase != v1alpha1.ReservationReserved || !hold.ReservedAt.Equal(t0.Add(10*time.Second)) ||
		!hold.ExpiresAt.Equal(t0.Add(10*time.Second+holdTTL)) {
		t.Fatalf("hold %+v, want provisional, Reserved from the deletion for the TTL", hold)
	}
	if got := c.h.ReservationHolds(); len(got) != 1 || got[0] != key {
		t.Errorf("holds %v, want %v", got, key)
	}
	sel := hold.Reservation.Spec.PodSelector.MatchLabels
	if len(sel) != 1 || sel["app"] != "web" {
		t.Errorf("selector %v, want app=web (no pod-template-hash)", sel)
	}
	if refs := hold.Reservation.OwnerReferences; len(refs) != 1 || refs[0].Name != "web-rs" || refs[0].UID != "rs-uid" {
		t.Errorf("owner references %+v, want the ReplicaSet", refs)
	}

	c.clk.Step(time.Second)
	c.must(c.h.Add(created(hold, c.clk.Now())))
	c.expect("the Reservation took the hold over", 2000, 2000)
	v := c.view(key)
	if v.Provisional || v.Phase != v1alpha1.ReservationReserved || !v.ExpiresAt.Equal(hold.ExpiresAt) {
		t.Errorf("after the take-over %+v, want an ordinary Reserved reservation with the hold's deadline", v)
	}
	if got := c.h.ReservationHolds(); len(got) != 0 {
		t.Errorf("holds %v after the take-over", got)
	}

	c.clk.Step(time.Second)
	repl := web("web-b", "v2", c.clk.Now())
	c.sync(store.PodKey(repl), repl)
	c.expect("the replacement consumed it", 2000, 0)
	if v := c.view(key); v.Phase != v1alpha1.ReservationMatched || v.Owner == nil || v.Owner.Name != "web-b" {
		t.Errorf("reservation %+v, want Matched by web-b", v)
	}
}

func TestReserveOnDelete_ReplacementBeforeTheReservationConsumesTheHold(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.clk.Step(5 * time.Second)
	c.sync(store.PodKey(old), nil)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	hold := c.view(key)

	repl := web("web-b", "v2", c.clk.Now()) // landed the second the old one went
	c.sync(store.PodKey(repl), repl)
	c.expect("the replacement consumed the hold", 2000, 0)

	c.clk.Step(3 * time.Second) // the Reservation is created after the replacement landed
	c.must(c.h.Add(created(hold, c.clk.Now())))
	c.expect("the Reservation took the consumed hold over", 2000, 0)
	if v := c.view(key); v.Provisional || v.Phase != v1alpha1.ReservationMatched || v.Owner.Name != "web-b" {
		t.Errorf("reservation %+v, want Matched by the replacement", v)
	}

	// A restart: a fresh cache fed the same objects in either order ends the same way.
	for _, order := range []string{"pod first", "reservation first"} {
		f := newCluster(t)
		f.clk.SetTime(c.clk.Now())
		r := created(hold, c.clk.Now().Add(-3*time.Second))
		if order == "pod first" {
			f.sync(store.PodKey(repl), repl)
			f.must(f.h.Add(r))
		} else {
			f.must(f.h.Add(r))
			f.sync(store.PodKey(repl), repl)
		}
		f.expect("after a restart, "+order, 2000, 0)
		if v := f.view(key); v.Phase != v1alpha1.ReservationMatched || v.Owner.Name != "web-b" || !v.ReservedAt.Equal(hold.ReservedAt) {
			t.Errorf("after a restart (%s): %+v, want Matched by web-b, reserved from the deletion", order, v)
		}
	}
}

func TestReserveOnDelete_HoldWithoutReservationReleasedAtTheTTL(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.sync(store.PodKey(old), nil)
	c.clk.Step(holdTTL - time.Second)
	c.h.DropDueHolds()
	c.expect("one second before the TTL", 2000, 2000)
	c.clk.Step(time.Second)
	if tr := c.h.ReapReservations(); len(tr) != 0 {
		t.Errorf("the reservation reaper ended %+v; a hold is dropped by DropDueHolds", tr)
	}
	tr := c.h.DropDueHolds()
	if len(tr) != 1 || !tr[0].Hold || tr[0].From != v1alpha1.ReservationReserved || tr[0].To != v1alpha1.ReservationExpired {
		t.Errorf("transitions %+v, want the hold's Reserved->Expired", tr)
	}
	info, _ := c.h.NodeInfo("n1")
	if !info.Requested.IsZero() {
		t.Errorf("n1 still requests %+v after the TTL", info.Requested)
	}
	if _, ok := c.h.Reservation(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}); ok {
		t.Error("the hold is still there")
	}
	if errs := c.h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
	// The Reservation arriving late (a slow leader) expires at once: it holds from the deletion.
	late := &v1alpha1.Reservation{}
	hold, _ := reservationstore.Replacement(old, holdTTL, t0)
	hold.DeepCopyInto(late)
	late.UID, late.CreationTimestamp = "late", metav1.NewTime(c.clk.Now())
	c.must(c.h.Add(late))
	c.h.ReapReservations()
	if v, _ := c.h.Reservation(types.NamespacedName{Namespace: "ns", Name: late.Name}); v.Phase != v1alpha1.ReservationExpired {
		t.Errorf("a Reservation past the hold's deadline is %s, want Expired", v.Phase)
	}
}

func TestReserveOnDelete_ConsumedHoldDroppedAtTheTTLLeavesTheReplacementCharged(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.sync(store.PodKey(old), nil)
	repl := web("web-b", "v2", t0)
	c.sync(store.PodKey(repl), repl)
	c.clk.Step(holdTTL)
	tr := c.h.DropDueHolds()
	if len(tr) != 1 || tr[0].From != v1alpha1.ReservationMatched || tr[0].To != v1alpha1.ReservationMatched {
		t.Errorf("transitions %+v, want the hold ending consumed (Matched), not Matched->Expired", tr)
	}
	c.expect("the consumed hold is gone, the replacement stays", 2000, 0)
	if got := c.h.ReservationHolds(); len(got) != 0 {
		t.Errorf("holds %v after the TTL", got)
	}
}

func TestReserveOnDelete_RecreatedUnderTheSameNameTakesThePlaceAtOnce(t *testing.T) {
	c := newCluster(t)
	old := web("db-0", "v1", t0, kept(), ts.WithLabels("statefulset.kubernetes.io/pod-name", "db-0"))
	c.sync(store.PodKey(old), old)
	// The feed sees only the new pod of the same name (the delete was never observed), and
	// late: the pod was recreated 2 s in, the feed gets to it 10 s in.
	again := web("db-0", "v2", t0.Add(2*time.Second), kept(), ts.WithUID("uid-2"), ts.WithLabels("statefulset.kubernetes.io/pod-name", "db-0"))
	c.clk.Step(10 * time.Second)
	c.sync(store.PodKey(again), again)
	c.expect("the recreated pod took its own place", 2000, 0)
	v := c.view(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)})
	if v.Phase != v1alpha1.ReservationMatched || v.Owner.UID != "uid-2" {
		t.Errorf("hold %+v, want Matched by the recreated pod", v)
	}
	if sel := v.Reservation.Spec.PodSelector.MatchLabels; sel["statefulset.kubernetes.io/pod-name"] != "db-0" {
		t.Errorf("selector %v, want the pod's ordinal kept", sel)
	}
}

func TestReserveOnDelete_OwnerAnnotationCountsAndThePodsOwnValueWins(t *testing.T) {
	for _, tc := range []struct {
		name      string
		owner     string
		pod       []ts.PodOption
		ownerUID  string
		wantKept  bool
		wantTotal string // metric result counted
	}{
		{"owner says true", "true", nil, "rs-uid", true, "held"},
		{"owner says true, pod says false", "true", []ts.PodOption{ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "false")}, "rs-uid", false, ""},
		{"owner of another UID", "true", nil, "other-uid", false, ""},
		{"owner says nothing", "", nil, "rs-uid", false, ""},
		{"owner says yes", "yes", nil, "rs-uid", false, "invalid_annotation"},
		{"pod says yes", "", []ts.PodOption{ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "yes")}, "rs-uid", false, "invalid_annotation"},
		{"pod asks but requests nothing", "", []ts.PodOption{kept(), ts.Requests("", "")}, "rs-uid", false, "cannot_keep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			o := ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web-rs", "app", "web")
			o.UID, o.ReserveOnDelete = types.UID(tc.ownerUID), tc.owner
			c.must(c.h.Add(o))
			pod := web("web-a", "v1", t0, tc.pod...)
			c.sync(store.PodKey(pod), pod)
			before := counter(t, tc.wantTotal)
			c.sync(store.PodKey(pod), nil)
			_, held := c.h.Reservation(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(pod)})
			if held != tc.wantKept {
				t.Errorf("place kept %v, want %v", held, tc.wantKept)
			}
			if tc.wantTotal != "" && counter(t, tc.wantTotal) != before+1 {
				t.Errorf("multicache_reserve_on_delete_total{result=%q} did not count it", tc.wantTotal)
			}
			if errs := c.h.CheckInvariants(); len(errs) > 0 {
				t.Error(errs)
			}
		})
	}
}

func TestReserveOnDelete_OnlyABoundAPIPodKeepsItsPlace(t *testing.T) {
	c := newCluster(t)
	// An assumption that is forgotten is no deletion.
	assumed := web("web-a", "v1", t0, kept())
	c.must(c.h.AssumePod(assumed))
	c.must(c.h.ForgetPod(assumed))
	// A pending pod deleted holds nothing anywhere.
	pending := web("web-p", "v1", t0, kept(), ts.OnNode(""))
	c.sync(store.PodKey(pending), pending)
	c.sync(store.PodKey(pending), nil)
	// A finished pod holds nothing.
	done := web("web-d", "v1", t0, kept(), ts.InPhase(corev1.PodSucceeded))
	c.sync(store.PodKey(done), done)
	c.sync(store.PodKey(done), nil)
	if got := c.h.ReservationHolds(); len(got) != 0 {
		t.Errorf("holds %v, want none", got)
	}
	info, _ := c.h.NodeInfo("n1")
	if !info.Requested.IsZero() {
		t.Errorf("n1 requests %+v, want nothing", info.Requested)
	}
}

func counter(t *testing.T, result string) float64 {
	t.Helper()
	if result == "" {
		return 0
	}
	var m dto.Metric
	if err := metrics.ReserveOnDeleteTotal.WithLabelValues(result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestReserveOnDelete_AReservationOfTheHoldsNameThatDiffersReplacesIt: a Reservation that is
// not the hold's (other resources here: hand-made under that name) drops the hold and is
// added as any reservation is: one charge, the Reservation's.
func TestReserveOnDelete_AReservationOfTheHoldsNameThatDiffersReplacesIt(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.sync(store.PodKey(old), nil)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	other := ts.ReservationCreatedAt(ts.MakeReservation("ns", key.Name, "n1", "1", "1Gi", "app", "web"), t0.Add(time.Second))
	c.must(c.h.Add(other))
	info, _ := c.h.NodeInfo("n1")
	if info.Requested.MilliCPU != 1000 || info.Reserved.MilliCPU != 1000 {
		t.Errorf("n1 requested %dm reserved %dm, want the Reservation's 1000m only", info.Requested.MilliCPU, info.Reserved.MilliCPU)
	}
	if v := c.view(key); v.Provisional || v.Phase != v1alpha1.ReservationReserved || !v.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("%+v, want an ordinary reservation with the default TTL", v)
	}
	if errs := c.h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

func TestReserveOnDelete_TheTakeOverAdoptsTheLeadersDeletionTime(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	// This replica (a standby) sees the delete 10 s in; the leader saw it at 8 s and the
	// Reservation it created says so.
	c.clk.Step(10 * time.Second)
	c.sync(store.PodKey(old), nil)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	r := created(c.view(key), c.clk.Now())
	leaderSaw := t0.Add(8 * time.Second)
	r.Annotations[v1alpha1.ReplacesSinceAnnotation] = leaderSaw.Format(time.RFC3339)
	c.must(c.h.Add(r))
	v := c.view(key)
	if !v.ReservedAt.Equal(leaderSaw) || !v.ExpiresAt.Equal(leaderSaw.Add(holdTTL)) {
		t.Fatalf("after the take-over reserved at %v until %v; want the leader's %v until %v",
			v.ReservedAt, v.ExpiresAt, leaderSaw, leaderSaw.Add(holdTTL))
	}
	c.expect("the Reservation took the hold over", 2000, 2000)
}

// TestReserveOnDelete_AHoldWhoseReservationComesWrittenStillCountsItsResult: found in
// review. A standby's Reservation feed can deliver the leader's Reservation with its status
// already written; the hold does not take that over, and the Reservation that replaces it
// must count the hold's result (here: consumed), so that held = consumed + expired +
// released.
func TestReserveOnDelete_AHoldWhoseReservationComesWrittenStillCountsItsResult(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	c.clk.Step(10 * time.Second)
	results := func() float64 {
		return counter(t, "consumed") + counter(t, "expired") + counter(t, "released_scale_down")
	}
	held0, results0 := counter(t, "held"), results()
	c.sync(store.PodKey(old), nil)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	r := created(c.view(key), c.clk.Now())
	at := metav1.NewTime(t0.Add(10 * time.Second))
	exp := metav1.NewTime(at.Add(holdTTL))
	r.ResourceVersion = "5"
	r.Status = v1alpha1.ReservationStatus{Phase: v1alpha1.ReservationReserved, ReservedAt: &at, ExpiresAt: &exp}
	c.must(c.h.Add(r))
	c.clk.Step(10 * time.Second)
	replacement := web("web-b", "v2", c.clk.Now())
	c.sync(store.PodKey(replacement), replacement)
	if v := c.view(key); v.Phase != v1alpha1.ReservationMatched {
		t.Fatalf("after the replacement landed: %s, want Matched", v.Phase)
	}
	if held, done := counter(t, "held")-held0, results()-results0; held != 1 || done != 1 {
		t.Errorf("held +%v, results +%v; want 1 and 1", held, done)
	}
}

// TestReserveOnDelete_APodOfAGoneNodeKeepsNoPlace: found in review. The pods of a deleted
// node are ended by the pod GC; no replacement comes to a node that does not exist, and a
// hold there would await the node outside every deadline heap, forever.
func TestReserveOnDelete_APodOfAGoneNodeKeepsNoPlace(t *testing.T) {
	c := newCluster(t)
	old := web("web-a", "v1", t0, kept())
	c.sync(store.PodKey(old), old)
	node, _ := c.h.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "n1"})
	c.must(c.h.Delete(node))
	cannot := counter(t, "cannot_keep")
	c.clk.Step(10 * time.Second)
	c.sync(store.PodKey(old), nil)
	key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(old)}
	if _, ok := c.h.Reservation(key); ok {
		t.Error("a hold was placed on a node that no longer exists")
	}
	if got := counter(t, "cannot_keep") - cannot; got != 1 {
		t.Errorf("cannot_keep +%v, want 1", got)
	}
}
