package handler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// What a reservation's status records is an input, with two rules found in review: a pod
// recorded by two statuses (a status writer working from a view a moment old) keeps only
// the preferred reservation (oldest, then by name), whichever status came back first; and
// a recorded match wins over an expiry this replica made on its own.

func nsKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "ns", Name: name}
}

func ownerName(h *Handler, name string) (v1alpha1.ReservationPhase, string) {
	v, _ := h.Reservation(nsKey(name))
	if v.Owner == nil {
		return v.Phase, ""
	}
	return v.Phase, v.Owner.Name
}

// Pods b and a land on n0 in the same second; r1 and r2 (r1 older) accept both. b arrives
// first and takes r1, whose writer persists r1 = Matched b; a arrives, wins the tie on its
// name and the pairing is redone (r1 = a, r2 = b), and r2's writer persists r2 = Matched
// b. Both statuses come back, in either order: b keeps only r1 (the older), r2 goes to a.
func TestReservation_TwoStatusesRecordingOnePodKeepOnlyTheOldest(t *testing.T) {
	for _, r2First := range []bool{false, true} {
		t.Run(fmt.Sprintf("r2 written back first=%v", r2First), func(t *testing.T) {
			h, clk := newQuietHandler(t)
			must(t, h.Add(ts.MakeNode("n0", "8", "16Gi")))
			created := clk.Now()
			r1 := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r1", "n0", "1", "1Gi", "app", "web"), created)
			r1.ResourceVersion = "1"
			r2 := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r2", "n0", "1", "1Gi", "app", "web"), created.Add(time.Second))
			r2.ResourceVersion = "2"
			must(t, h.Add(r1))
			clk.Step(time.Second)
			must(t, h.Add(r2))
			clk.Step(5 * time.Second)
			landed := clk.Now()
			b := ts.MakePod("ns", "b", ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(created), ts.OnNode("n0"), ts.ScheduledAt(landed), ts.WithResourceVersion("10"))
			a := ts.MakePod("ns", "a", ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(created), ts.OnNode("n0"), ts.ScheduledAt(landed.Add(500*time.Millisecond)), ts.WithResourceVersion("11"))
			must(t, h.Sync(store.PodKey(b), b, true, Current))
			v1, _ := h.Reservation(nsKey("r1"))
			st1 := persistedStatus(r1.Status, v1)
			must(t, h.Sync(store.PodKey(a), a, true, Current))
			v2, _ := h.Reservation(nsKey("r2"))
			st2 := persistedStatus(r2.Status, v2)
			if st1.CurrentOwner == nil || st1.CurrentOwner.Name != "b" || st2.CurrentOwner == nil || st2.CurrentOwner.Name != "b" {
				t.Fatalf("setup: the writers should persist r1 = b and r2 = b, got %v and %v", st1.CurrentOwner, st2.CurrentOwner)
			}
			r1b := r1.DeepCopy()
			r1b.Status, r1b.ResourceVersion = st1, "20"
			r2b := r2.DeepCopy()
			r2b.Status, r2b.ResourceVersion = st2, "21"
			writes := []func(){
				func() { must(t, h.Update(r1, r1b)) },
				func() { must(t, h.Update(r2, r2b)) },
			}
			if r2First {
				slices.Reverse(writes)
			}
			for _, w := range writes {
				w()
				if errs := h.CheckInvariants(); len(errs) > 0 {
					t.Fatalf("invariants: %v", errs)
				}
			}
			if p, o := ownerName(h, "r1"); p != v1alpha1.ReservationMatched || o != "b" {
				t.Errorf("r1: %s by %q, want Matched by b (the oldest status that records b)", p, o)
			}
			if p, o := ownerName(h, "r2"); p != v1alpha1.ReservationMatched || o != "a" {
				t.Errorf("r2: %s by %q, want Matched by a (its status gave way; a landed after it)", p, o)
			}
			// A restart with both statuses ends in the same place, in any order.
			objs := []object{{node: ts.MakeNode("n0", "8", "16Gi")}, {rsv: r1b}, {rsv: r2b}, {pod: a}, {pod: b}}
			want := canonicalDump(t, h)
			for _, order := range [][]int{{0, 1, 2, 3, 4}, {0, 2, 1, 4, 3}, {4, 3, 2, 1, 0}, {3, 2, 0, 4, 1}} {
				if got := canonicalDump(t, relist(t, objs, order, clk.Now(), func() string { return describe(objs, order) })); got != want {
					t.Errorf("relist in order %v:\n%s\nwant:\n%s", order, got, want)
				}
			}
		})
	}
}

// A pod lands just before the deadline; the leader applies it in time, writes Matched and
// dies. The new leader's reaper ticks at the deadline before its feed applies the pod and
// the old leader's Matched reaches it, and expires the reservation; the recorded Matched
// then comes: the new leader is Matched too, as a restart would be (not Expired, which it
// would write, with an event).
func TestReservation_ARecordedMatchWinsOverALocalExpiry(t *testing.T) {
	key := nsKey("r")
	h, clk := newQuietHandler(t) // ReservationTTL 1m
	must(t, h.Add(ts.MakeNode("n0", "8", "16Gi")))
	created := clk.Now()
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "n0", "1", "1Gi", "app", "web"), created)
	r.ResourceVersion = "1"
	must(t, h.Add(r))
	landed := created.Add(59 * time.Second)
	p := ts.MakePod("ns", "p", ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(created), ts.OnNode("n0"), ts.ScheduledAt(landed), ts.WithResourceVersion("5"))
	clk.SetTime(created.Add(time.Minute))
	if reaped := h.ReapReservations(); len(reaped) != 1 {
		t.Fatalf("setup: the new leader's reaper should expire r, reaped %v", reaped)
	}
	must(t, h.Sync(store.PodKey(p), p, true, Current))
	r2 := r.DeepCopy()
	r2.Status = ts.MatchedStatus(p, created)
	r2.ResourceVersion = "6"
	must(t, h.Update(r, r2))
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Fatalf("invariants: %v", errs)
	}
	live, _ := h.Reservation(key)
	if live.Phase != v1alpha1.ReservationMatched || live.Owner == nil || live.Owner.Name != "p" {
		t.Fatalf("the new leader keeps %s (owner %v) while the API says Matched by p", live.Phase, live.Owner)
	}

	fresh, fclk := newQuietHandler(t)
	fclk.SetTime(clk.Now())
	must(t, fresh.Add(ts.MakeNode("n0", "8", "16Gi")))
	must(t, fresh.Add(r2))
	must(t, fresh.Sync(store.PodKey(p), p, true, Current))
	if got, want := canonicalDump(t, h), canonicalDump(t, fresh); got != want {
		t.Errorf("the new leader differs from a restart:\n%s\nwant:\n%s", got, want)
	}
	// Nothing is left to reap, and the reaper does not take it back.
	clk.Step(time.Hour)
	if reaped := h.ReapReservations(); len(reaped) != 0 {
		t.Errorf("reaped %v after the recorded match", reaped)
	}
}

// TestReservation_StaleStatusWritesEndWhereARelistEnds: pods land on one node in the same
// few seconds, in random arrival orders, while status writers take views of reservations
// and write them back later (in flight: written from a view a moment old, in any order).
// Every step keeps the invariants (no pod recorded twice included); once the writers
// caught up, the cache is where a relist of the final objects ends, in any order.
func TestReservation_StaleStatusWritesEndWhereARelistEnds(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	for seed := range seeds {
		staleWrites(t, uint64(seed))
	}
}

func staleWrites(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x57a1e))
	h, clk := newQuietHandler(t)
	node := ts.MakeNode("n0", "16", "32Gi")
	must(t, h.Add(node))
	start := clk.Now()
	rv := 0
	next := func() string { rv++; return fmt.Sprint(rv) }
	var log, names []string
	check := func(format string, args ...any) {
		t.Helper()
		log = append(log, fmt.Sprintf(format, args...))
		errs := h.CheckInvariants()
		owners := map[v1alpha1.PodReference]string{}
		for _, name := range names {
			if v, _ := h.Reservation(nsKey(name)); v.Phase == v1alpha1.ReservationMatched {
				if other, dup := owners[*v.Owner]; dup {
					errs = append(errs, fmt.Errorf("pod %s owns %s and %s", v.Owner.Name, other, name))
				}
				owners[*v.Owner] = name
			}
		}
		if len(errs) > 0 {
			t.Fatalf("seed %d: %v\n  %s", seed, errs, strings.Join(log, "\n  "))
		}
	}
	rsvs := map[string]*v1alpha1.Reservation{}
	for i := range 2 + r.IntN(3) {
		name := fmt.Sprintf("r%d", i)
		rs := ts.ReservationCreatedAt(ts.MakeReservation("ns", name, "n0", "1", "1Gi", "app", "web"), start.Add(time.Duration(r.IntN(2))*time.Second))
		rs.ResourceVersion = next()
		rsvs[name], names = rs, append(names, name)
		must(t, h.Add(rs))
		check("reservation %s created %s", name, rs.CreationTimestamp.Format(time.TimeOnly))
	}
	clk.Step(5 * time.Second)
	landed := clk.Now()
	var pods []object
	for i := range 2 + r.IntN(3) {
		name := string(rune('a' + i))
		p := ts.MakePod("ns", name, ts.Requests("500m", "512Mi"), ts.WithLabels("app", "web"), ts.CreatedAt(start), ts.OnNode("n0"),
			ts.ScheduledAt(landed.Add(time.Duration(r.IntN(2))*time.Second)), ts.WithResourceVersion(next()))
		pods = append(pods, object{pod: p})
	}
	r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	type write struct {
		name string
		st   v1alpha1.ReservationStatus
	}
	var inflight []write
	apply := func(w write) {
		cur := rsvs[w.name]
		if equality.Semantic.DeepEqual(cur.Status, w.st) {
			return
		}
		upd := cur.DeepCopy()
		upd.Status, upd.ResourceVersion = w.st, next()
		rsvs[w.name] = upd
		must(t, h.Update(cur, upd))
		owner := ""
		if w.st.CurrentOwner != nil {
			owner = w.st.CurrentOwner.Name
		}
		check("status of %s written: %s %s", w.name, w.st.Phase, owner)
	}
	view := func(name string) write {
		v, _ := h.Reservation(nsKey(name))
		return write{name, persistedStatus(rsvs[name].Status, v)}
	}
	for len(pods) > 0 || len(inflight) > 0 {
		switch k := r.IntN(3); {
		case k == 0 && len(pods) > 0:
			p := pods[0].pod
			pods = pods[1:]
			must(t, h.Sync(store.PodKey(p), p, true, Current))
			check("pod %s landed %s", p.Name, p.Status.Conditions[0].LastTransitionTime.Format(time.TimeOnly))
		case k == 1:
			inflight = append(inflight, view(names[r.IntN(len(names))]))
		case len(inflight) > 0:
			i := r.IntN(len(inflight))
			w := inflight[i]
			inflight = slices.Delete(inflight, i, i+1)
			apply(w)
		}
	}
	// The writers catch up (each write changes what the others would write at most once).
	for range 2 * len(names) {
		for _, name := range names {
			apply(view(name))
		}
	}
	objs := []object{{node: node}}
	for _, name := range names {
		objs = append(objs, object{rsv: rsvs[name]})
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		if st, ok := h.PodState(types.NamespacedName{Namespace: "ns", Name: name}); ok {
			objs = append(objs, object{pod: st.Pod})
		}
	}
	want, wantStatus := canonicalDump(t, h), persisted(h, objs)
	for range 4 {
		order := r.Perm(len(objs))
		got := relist(t, objs, order, clk.Now(), func() string { return describe(objs, order) })
		if d := canonicalDump(t, got); d != want {
			t.Fatalf("seed %d: a relist differs from the live cache\ngot:\n%s\nwant:\n%s\nhistory:\n  %s\nobjects in the order fed:\n%s",
				seed, d, want, strings.Join(log, "\n  "), describe(objs, order))
		}
		if s := persisted(got, objs); !equality.Semantic.DeepEqual(s, wantStatus) {
			t.Fatalf("seed %d: a relist writes %v, the live cache %v", seed, s, wantStatus)
		}
	}
}

// TestRelist_AnyOrderAndAnyRestartEndInTheSamePlace_MoreSeeds runs the relist property on
// 500 seeds beyond the ordinary test's (skipped with -short; `make fuzz` explores the
// handler further, against its reference model). It shares no state with other tests, and
// runs beside them.
func TestRelist_AnyOrderAndAnyRestartEndInTheSamePlace_MoreSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	t.Parallel()
	for seed := 1000; seed < 1500; seed++ {
		relistProperty(t, uint64(seed), 6)
	}
}

// TestReservation_ARecordedPlacementOutlivesItsNode: a replica that saw the node place the
// reservation keeps it placed when the node goes; a replica that starts after the node went
// must agree, because the status records the placement (chaos found the two replicas
// disagreeing, Reserved against Pending, after a restart).
func TestReservation_ARecordedPlacementOutlivesItsNode(t *testing.T) {
	running, clk := newQuietHandler(t)
	node := ts.MakeNode("gone", "8", "16Gi")
	must(t, running.Add(node))
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "gone", "1", "1Gi", "app", "web"), clk.Now())
	r.ResourceVersion = "1"
	must(t, running.Add(r))
	v, _ := running.Reservation(nsKey("r"))
	if v.Phase != v1alpha1.ReservationReserved {
		t.Fatalf("with its node: %s, want Reserved", v.Phase)
	}
	recorded := r.DeepCopy()
	recorded.ResourceVersion = "2"
	recorded.Status = persistedStatus(r.Status, v)
	must(t, running.Update(r, recorded))
	must(t, running.Delete(node))

	started, _ := newQuietHandler(t)
	must(t, started.Add(recorded))
	// Chaos, the long run: a replica that restarted after the node went but before the
	// leader wrote (a burst kept it busy for minutes) awaits the node, then gets the record.
	awaiting, _ := newQuietHandler(t)
	must(t, awaiting.Add(r))
	if v, _ := awaiting.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationPending {
		t.Fatalf("before any status, without the node: %s, want Pending", v.Phase)
	}
	must(t, awaiting.Update(r, recorded))
	for name, h := range map[string]*Handler{"the running replica": running, "a replica started after the node went": started,
		"a replica awaiting the node when the status came": awaiting} {
		v, _ := h.Reservation(nsKey("r"))
		if v.Phase != v1alpha1.ReservationReserved || v.Node != "gone" || !v.ReservedAt.Equal(recorded.Status.ReservedAt.Time) {
			t.Errorf("%s: %s on %q reserved at %v, want Reserved on gone at the recorded %v", name, v.Phase, v.Node, v.ReservedAt, recorded.Status.ReservedAt)
		}
		if errs := h.CheckInvariants(); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
}

// TestReservation_AnExpiryRecordedWhileAwaitingTheNodeEndsItThere: the same replica as
// above gets the leader's Expired record instead (the leader placed it and its TTL ran out
// before this replica ever saw the node): it ends Expired at the recorded times, not
// Pending for good.
func TestReservation_AnExpiryRecordedWhileAwaitingTheNodeEndsItThere(t *testing.T) {
	h, clk := newQuietHandler(t)
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "gone", "1", "1Gi", "app", "web"), clk.Now())
	r.ResourceVersion = "1"
	must(t, h.Add(r))
	expired := r.DeepCopy()
	expired.ResourceVersion = "2"
	expired.Status = ts.ReservedStatus(clk.Now(), clk.Now().Add(time.Minute))
	expired.Status.Phase = v1alpha1.ReservationExpired
	must(t, h.Update(r, expired))
	v, _ := h.Reservation(nsKey("r"))
	if v.Phase != v1alpha1.ReservationExpired || v.AwaitingNode != "" || !v.ExpiresAt.Equal(expired.Status.ExpiresAt.Time) {
		t.Errorf("%s awaiting %q expiring %v, want Expired at the recorded %v", v.Phase, v.AwaitingNode, v.ExpiresAt, expired.Status.ExpiresAt)
	}
	// The node appearing later places nothing.
	must(t, h.Add(ts.MakeNode("gone", "8", "16Gi")))
	if info, _ := h.NodeInfo("gone"); info.Requested.MilliCPU != 0 {
		t.Errorf("node charged %dm for an Expired reservation", info.Requested.MilliCPU)
	}
	checkInvariants(t, h)
}

// TestReservation_APendingRecordedForANodeThisReplicaSawLateEndsItsPlacement: a replica
// whose watches run late placed a reservation on a node the leader never saw (it went
// before the leader saw the reservation), and the leader recorded Pending. Once this
// replica does not know the node either, whichever came first (the node's delete or the
// record), it holds what the leader holds: Pending, awaiting the node, nothing charged; and
// both place it again when the node comes back.
func TestReservation_APendingRecordedForANodeThisReplicaSawLateEndsItsPlacement(t *testing.T) {
	leader, clk := newQuietHandler(t)
	r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "late", "1", "1Gi", "app", "web"), clk.Now())
	r.ResourceVersion = "1"
	must(t, leader.Add(r))
	lv, _ := leader.Reservation(nsKey("r"))
	if lv.Phase != v1alpha1.ReservationPending || lv.AwaitingNode != "late" {
		t.Fatalf("the leader, without the node: %s awaiting %q, want Pending awaiting late", lv.Phase, lv.AwaitingNode)
	}
	recorded := r.DeepCopy()
	recorded.ResourceVersion = "2"
	recorded.Status = persistedStatus(r.Status, lv)

	for _, order := range []string{"record, then the node's delete", "the node's delete, then the record"} {
		t.Run(order, func(t *testing.T) {
			late, _ := newQuietHandler(t)
			node := ts.MakeNode("late", "8", "16Gi")
			must(t, late.Add(node))
			must(t, late.Add(r))
			if v, _ := late.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationReserved {
				t.Fatalf("with the node: %s, want Reserved", v.Phase)
			}
			if order == "record, then the node's delete" {
				must(t, late.Update(r, recorded))
				// The node is still known here: the leader will see it too.
				if v, _ := late.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationReserved {
					t.Errorf("record while the node is known: %s, want Reserved", v.Phase)
				}
				must(t, late.Delete(node))
			} else {
				must(t, late.Delete(node))
				must(t, late.Update(r, recorded))
			}
			v, _ := late.Reservation(nsKey("r"))
			if v.Phase != lv.Phase || v.AwaitingNode != lv.AwaitingNode || !v.ReservedAt.IsZero() {
				t.Errorf("%s awaiting %q reserved at %v, want the leader's %s awaiting %q with no times", v.Phase, v.AwaitingNode, v.ReservedAt, lv.Phase, lv.AwaitingNode)
			}
			if info, ok := late.NodeInfo("late"); ok && info.Requested.MilliCPU != 0 {
				t.Errorf("the gone node still charged %dm", info.Requested.MilliCPU)
			}
			if errs := late.CheckInvariants(); len(errs) > 0 {
				t.Error(errs)
			}
			must(t, late.Add(ts.MakeNode("late", "8", "16Gi")))
			if v, _ := late.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationReserved {
				t.Errorf("the node back: %s, want Reserved, as on the leader", v.Phase)
			}
		})
	}
	must(t, leader.Add(ts.MakeNode("late", "8", "16Gi")))
	if v, _ := leader.Reservation(nsKey("r")); v.Phase != v1alpha1.ReservationReserved {
		t.Errorf("the leader, the node back: %s, want Reserved", v.Phase)
	}
}
