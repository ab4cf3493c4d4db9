package handler

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestReservation_AStandbyAppliesTheTimesAndTheExpiryTheLeaderRecorded: replicas place a
// reservation by their own clocks until a status records the leader's; what the status
// records is every replica's input (chaos D2: a new leader otherwise rewrites reservedAt,
// or writes Reserved over Expired).
func TestReservation_AStandbyAppliesTheTimesAndTheExpiryTheLeaderRecorded(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	pending := ts.MakeReservation("ns", "r", "", "2", "1Gi", "app", "x")
	pending.ResourceVersion = "1"
	must(t, h.Add(pending))
	key := types.NamespacedName{Namespace: "ns", Name: "r"}

	// This replica sees the node named at its own time...
	clk.Step(300 * time.Millisecond)
	placed := pending.DeepCopy()
	placed.Spec.NodeName, placed.ResourceVersion = "n1", "2"
	must(t, h.Update(pending, placed))
	v, _ := h.Reservation(key)
	if v.Phase != v1alpha1.ReservationReserved || !v.ReservedAt.Equal(t0) {
		t.Fatalf("placed: %s at %v", v.Phase, v.ReservedAt)
	}
	// ...the leader placed it a second later and wrote so.
	leaders := t0.Add(time.Second)
	recorded := placed.DeepCopy()
	recorded.ResourceVersion = "3"
	recorded.Status = ts.ReservedStatus(leaders, leaders.Add(time.Minute))
	must(t, h.Update(placed, recorded))
	v, _ = h.Reservation(key)
	if !v.ReservedAt.Equal(leaders) || !v.ExpiresAt.Equal(leaders.Add(time.Minute)) {
		t.Errorf("reservedAt %v expiresAt %v, want the leader's %v and %v", v.ReservedAt, v.ExpiresAt, leaders, leaders.Add(time.Minute))
	}
	// The deadline moved with it: nothing expires at this replica's own deadline.
	clk.SetTime(t0.Add(time.Minute))
	if got := h.ReapReservations(); len(got) != 0 {
		t.Errorf("expired at this replica's deadline: %v", got)
	}

	// The leader's reaper expired it; this replica adopts that, releasing the placeholder.
	expired := recorded.DeepCopy()
	expired.ResourceVersion = "4"
	expired.Status.Phase = v1alpha1.ReservationExpired
	must(t, h.Update(recorded, expired))
	v, _ = h.Reservation(key)
	info, _ := h.NodeInfo("n1")
	if v.Phase != v1alpha1.ReservationExpired || info.Reserved.MilliCPU != 0 || info.Requested.MilliCPU != 0 {
		t.Errorf("after the leader's Expired: %s, node reserved %dm requested %dm", v.Phase, info.Reserved.MilliCPU, info.Requested.MilliCPU)
	}
	checkInvariants(t, h)
}

// TestReservation_AStandbyNeverExpiresAReservationItselfAndDecidesOnceLeader: a standby
// runs StartExpiry only (assumed pods and holds, in-process); whatever its clock says, it
// keeps a Reserved reservation Reserved until a status records otherwise. Once it is leader
// (StartReaper runs), it decides: a deadline already past, counted from the recorded
// reservedAt, expires at its first tick.
func TestReservation_AStandbyNeverExpiresAReservationItselfAndDecidesOnceLeader(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	r := ts.MakeReservation("ns", "r", "n1", "2", "1Gi", "app", "x")
	r.ResourceVersion = "1"
	must(t, h.Add(r)) // placed at t0 by this replica's clock
	leaders := t0.Add(-10 * time.Second)
	recorded := r.DeepCopy()
	recorded.ResourceVersion = "2"
	recorded.Status = ts.ReservedStatus(leaders, leaders.Add(time.Minute))
	must(t, h.Update(r, recorded))
	key := types.NamespacedName{Namespace: "ns", Name: "r"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	standby := make(chan error, 1)
	go func() { standby <- h.StartExpiry(ctx) }()
	// Two ticks of the standby's loop, each shown by an assumed pod it expires; the second
	// proves the first tick (well past the reservation's deadline) ran to its end.
	for i, name := range []string{"a", "b"} {
		p := ts.MakePod("ns", name, ts.OnNode("n1"), ts.Requests("1", "1Gi"))
		must(t, h.AssumePod(p))
		must(t, h.FinishBinding(p))
		if i == 0 {
			clk.Step(5 * time.Minute)
		}
		for {
			if _, ok := h.PodState(store.PodKey(p)); !ok {
				break
			}
			clk.Step(time.Second)
			runtime.Gosched()
		}
	}
	v, _ := h.Reservation(key)
	info, _ := h.NodeInfo("n1")
	if v.Phase != v1alpha1.ReservationReserved || !v.ExpiresAt.Equal(leaders.Add(time.Minute)) || info.Reserved.MilliCPU != 2000 {
		t.Fatalf("on a standby past the deadline: %s expires %v, node reserved %dm; want Reserved until the recorded %v, 2000m",
			v.Phase, v.ExpiresAt, info.Reserved.MilliCPU, leaders.Add(time.Minute))
	}

	// It becomes leader: the reaper starts and expires it at its first tick.
	leader := make(chan error, 1)
	go func() { leader <- h.StartReaper(ctx) }()
	for v.Phase == v1alpha1.ReservationReserved {
		clk.Step(time.Second)
		runtime.Gosched()
		v, _ = h.Reservation(key)
	}
	info, _ = h.NodeInfo("n1")
	if v.Phase != v1alpha1.ReservationExpired || !v.ExpiresAt.Equal(leaders.Add(time.Minute)) || info.Reserved.MilliCPU != 0 {
		t.Errorf("once leader: %s expires %v, node reserved %dm; want Expired at the recorded deadline %v, 0m",
			v.Phase, v.ExpiresAt, info.Reserved.MilliCPU, leaders.Add(time.Minute))
	}
	cancel()
	for _, ch := range []chan error{standby, leader} {
		if err := <-ch; err != nil {
			t.Error(err)
		}
	}
	checkInvariants(t, h)
}

// TestReservation_AnExpiryStandsWhateverReservedRecordArrivesLater: the leader never
// records Reserved after Expired, so a Reserved record arriving after an expiry (the
// leader's own earlier write, late; an old leader's) is old: it does not bring the
// reservation back.
func TestReservation_AnExpiryStandsWhateverReservedRecordArrivesLater(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	r := ts.MakeReservation("ns", "r", "n1", "2", "1Gi", "app", "x")
	r.ResourceVersion = "1"
	must(t, h.Add(r))
	key := types.NamespacedName{Namespace: "ns", Name: "r"}
	clk.SetTime(t0.Add(time.Minute))
	if got := h.ReapReservations(); len(got) != 1 {
		t.Fatalf("the leader expired %v, want r", got)
	}
	for i, at := range []time.Time{t0, t0.Add(50 * time.Second)} {
		old := r.DeepCopy()
		old.ResourceVersion = strconv.Itoa(2 + i)
		old.Status = ts.ReservedStatus(at, at.Add(time.Minute))
		must(t, h.Update(r, old))
		v, _ := h.Reservation(key)
		info, _ := h.NodeInfo("n1")
		if v.Phase != v1alpha1.ReservationExpired || info.Reserved.MilliCPU != 0 {
			t.Errorf("after a Reserved record from %v: %s, node reserved %dm; want Expired, 0m", at, v.Phase, info.Reserved.MilliCPU)
		}
		r = old
	}
	checkInvariants(t, h)
}

// TestReservation_AMatchedReservationKeepsTheReservedAtTheLeaderRecorded: each replica
// placed the reservation by its own clock and a pod consumed it at once; the leader's
// Matched record carries its reservedAt, which every replica keeps (chaos: the replicas
// disagreed on reservedAt for good, and a new leader would have rewritten it).
func TestReservation_AMatchedReservationKeepsTheReservedAtTheLeaderRecorded(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "n1", "1", "1Gi", "app", "web"), t0)
	r.ResourceVersion = "1"
	must(t, h.Add(r))
	clk.Step(2 * time.Second)
	pod := ts.MakePod("ns", "p", ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(t0),
		ts.OnNode("n1"), ts.ScheduledAt(clk.Now()), ts.WithResourceVersion("10"))
	must(t, h.Sync(store.PodKey(pod), pod, true, Current))
	if phase, owner := ownerName(h, "r"); phase != v1alpha1.ReservationMatched || owner != "p" {
		t.Fatalf("%s by %q, want Matched by p", phase, owner)
	}
	leaders := t0.Add(time.Second)
	recorded := r.DeepCopy()
	recorded.ResourceVersion = "2"
	recorded.Status = ts.MatchedStatus(pod, leaders)
	must(t, h.Update(r, recorded))
	v, _ := h.Reservation(nsKey("r"))
	if v.Phase != v1alpha1.ReservationMatched || !v.ReservedAt.Equal(leaders) {
		t.Errorf("%s reserved at %v, want Matched reserved at the leader's %v", v.Phase, v.ReservedAt, leaders)
	}
	checkInvariants(t, h)
}

// TestReservation_AReplicaThatPlacedItAfterTheLeaderAdoptsTheRecordedExpiryAndReservedAt:
// found by the chaos suite after a kill -9 of the leader. The restarted replica saw the
// reservation before any status (its old leader was killed before writing one) and placed
// it by its own clock; the new leader, which had placed it earlier, then recorded it
// Expired. The replica must keep the leader's reservedAt with the leader's expiry, not its
// own reservedAt (later than the expiry) beside it.
func TestReservation_AReplicaThatPlacedItAfterTheLeaderAdoptsTheRecordedExpiryAndReservedAt(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	placed := ts.MakeReservation("ns", "r", "n1", "2", "1Gi", "app", "x")
	placed.ResourceVersion = "1"
	must(t, h.Add(placed)) // placed at t0 by this replica's clock
	key := types.NamespacedName{Namespace: "ns", Name: "r"}

	leaders := t0.Add(-5 * time.Second)
	expired := placed.DeepCopy()
	expired.ResourceVersion = "2"
	expired.Status = ts.ReservedStatus(leaders, t0.Add(-time.Second))
	expired.Status.Phase = v1alpha1.ReservationExpired
	must(t, h.Update(placed, expired))
	v, _ := h.Reservation(key)
	if v.Phase != v1alpha1.ReservationExpired || !v.ReservedAt.Equal(leaders) || !v.ExpiresAt.Equal(t0.Add(-time.Second)) {
		t.Errorf("%s reserved at %v expires %v, want Expired with the leader's %v and %v", v.Phase, v.ReservedAt, v.ExpiresAt, leaders, t0.Add(-time.Second))
	}
	checkInvariants(t, h)
}

// TestReservation_AMatchRecordedWhileAwaitingTheNodeKeepsTheLeadersTimes: chaos D7. A
// replica that restarts sees a reservation before its node (its informers fill in any
// order), so it awaits the node; the leader's Matched record then arrives first. The
// replica must take the recorded reservedAt (and the deadline counted from it) as the
// replica that placed it did, not hold the match with no times, and must write them back
// when it leads.
func TestReservation_AMatchRecordedWhileAwaitingTheNodeKeepsTheLeadersTimes(t *testing.T) {
	h, _ := newHandler(t)
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "n1", "1", "1Gi", "app", "web"), t0)
	r.ResourceVersion = "1"
	must(t, h.Add(r)) // no node yet: Pending, awaiting n1
	if v, _ := h.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationPending || v.AwaitingNode != "n1" {
		t.Fatalf("before the node: %s awaiting %q", v.Phase, v.AwaitingNode)
	}
	pod := ts.MakePod("ns", "p", ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(t0),
		ts.OnNode("n1"), ts.ScheduledAt(t0.Add(2*time.Second)), ts.WithResourceVersion("10"))
	leaders := t0.Add(time.Second)
	recorded := r.DeepCopy()
	recorded.ResourceVersion = "2"
	recorded.Status = ts.MatchedStatus(pod, leaders)
	must(t, h.Update(r, recorded))
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	must(t, h.Sync(store.PodKey(pod), pod, true, Current))

	v, _ := h.Reservation(nsKey("r"))
	wantExpiry := leaders.Add(h.Config().ReservationDefaultTTL())
	if v.Phase != v1alpha1.ReservationMatched || v.Owner == nil || v.Owner.Name != "p" ||
		!v.ReservedAt.Equal(leaders) || !v.ExpiresAt.Equal(wantExpiry) {
		t.Errorf("%s by %v reserved at %v expires %v, want Matched by p reserved at the leader's %v, expiring %v",
			v.Phase, v.Owner, v.ReservedAt, v.ExpiresAt, leaders, wantExpiry)
	}
	// The same from a cold start whose first sight of it is the Matched record.
	h2, _ := newHandler(t)
	must(t, h2.Add(recorded))
	v2, _ := h2.Reservation(nsKey("r"))
	if !v2.ReservedAt.Equal(leaders) || !v2.ExpiresAt.Equal(wantExpiry) {
		t.Errorf("cold start: reserved at %v expires %v, want %v and %v", v2.ReservedAt, v2.ExpiresAt, leaders, wantExpiry)
	}
	checkInvariants(t, h)
	checkInvariants(t, h2)
}

// TestReservation_AReplicaThatExpiredItItselfAdoptsTheRecordedReservedAt: a leader placed a
// reservation by its own clock and expired it at that deadline, but lost the lease before
// writing either; the next leader, which had placed it earlier, recorded Expired with its
// own reservedAt and expiry. The first replica keeps both recorded times: if it leads
// again, it must not write its own reservedAt beside the recorded expiry (which would then
// be earlier than reservedAt + TTL).
func TestReservation_AReplicaThatExpiredItItselfAdoptsTheRecordedReservedAt(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	placed := ts.MakeReservation("ns", "r", "n1", "2", "1Gi", "app", "x")
	placed.ResourceVersion = "1"
	must(t, h.Add(placed)) // placed at t0 by this replica's clock
	clk.SetTime(t0.Add(time.Minute))
	if got := h.ReapReservations(); len(got) != 1 {
		t.Fatalf("expired %v, want r", got)
	}
	leaders := t0.Add(-2 * time.Second)
	expired := placed.DeepCopy()
	expired.ResourceVersion = "2"
	expired.Status = ts.ReservedStatus(leaders, leaders.Add(time.Minute))
	expired.Status.Phase = v1alpha1.ReservationExpired
	must(t, h.Update(placed, expired))
	v, _ := h.Reservation(nsKey("r"))
	if v.Phase != v1alpha1.ReservationExpired || !v.ReservedAt.Equal(leaders) || !v.ExpiresAt.Equal(leaders.Add(time.Minute)) {
		t.Errorf("%s reserved at %v expires %v, want Expired with the leader's %v and %v", v.Phase, v.ReservedAt, v.ExpiresAt, leaders, leaders.Add(time.Minute))
	}
	checkInvariants(t, h)
}
