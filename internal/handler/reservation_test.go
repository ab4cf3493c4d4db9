package handler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var rsvKey = types.NamespacedName{Namespace: "ns", Name: "r"}

// reservationFixture is a node n1 (8 CPU) with reservation ns/r of 2 CPU for app=web.
func reservationFixture(t *testing.T) (*Handler, *v1alpha1.Reservation, *clocktesting.FakeClock) {
	t.Helper()
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	r := ts.MakeReservation("ns", "r", "n1", "2", "4Gi", "app", "web")
	must(t, h.Add(r))
	return h, r, clk
}

func web(name string, opts ...ts.PodOption) *corev1.Pod {
	return ts.MakePod("ns", name, append([]ts.PodOption{ts.OnNode("n1"), ts.Requests("2", "4Gi"), ts.WithLabels("app", "web")}, opts...)...)
}

// expectCharge checks what node n1 is charged with: requested CPU (millicores), reserved CPU,
// and the phase of ns/r.
func expectCharge(t *testing.T, h *Handler, requested, reserved int64, phase v1alpha1.ReservationPhase) {
	t.Helper()
	info, _ := h.NodeInfo("n1")
	if info.Requested.MilliCPU != requested || info.Reserved.MilliCPU != reserved {
		t.Errorf("n1 requested %dm reserved %dm, want %dm and %dm", info.Requested.MilliCPU, info.Reserved.MilliCPU, requested, reserved)
	}
	v, _ := h.Reservation(rsvKey)
	if v.Phase != phase {
		t.Errorf("phase %s, want %s", v.Phase, phase)
	}
	checkInvariants(t, h)
}

func TestReservation_ReservedChargesAPlaceholderOnItsNode(t *testing.T) {
	h, _, _ := reservationFixture(t)
	expectCharge(t, h, 2000, 2000, v1alpha1.ReservationReserved)
	v, _ := h.Reservation(rsvKey)
	if !v.ExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("expires at %v, want reservedAt + the default TTL", v.ExpiresAt)
	}
	if st, ok := h.PodState(types.NamespacedName{Namespace: "ns", Name: "reservation:r"}); ok {
		t.Errorf("the placeholder reached the pod store: %+v", st)
	}
}

func TestReservation_MatchedPodReleasesPlaceholder(t *testing.T) {
	h, _, _ := reservationFixture(t)
	must(t, h.Add(web("w1")))
	expectCharge(t, h, 2000, 0, v1alpha1.ReservationMatched) // nothing counted twice
	v, _ := h.Reservation(rsvKey)
	if v.Owner == nil || v.Owner.Name != "w1" || v.OwnerAssumed {
		t.Errorf("owner %+v (assumed %v), want confirmed ns/w1", v.Owner, v.OwnerAssumed)
	}
	// A second matching pod finds nothing left to consume.
	must(t, h.Add(web("w2")))
	expectCharge(t, h, 4000, 0, v1alpha1.ReservationMatched)
}

func TestReservation_PodsThatCannotConsumeItLeaveItReserved(t *testing.T) {
	for name, pod := range map[string]*corev1.Pod{
		"other labels":    ts.MakePod("ns", "x", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.WithLabels("app", "db")),
		"other namespace": ts.MakePod("other", "x", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.WithLabels("app", "web")),
		"best-effort":     web("x", ts.BestEffort()),
		"finished":        web("x", ts.InPhase(corev1.PodSucceeded)),
		"not bound":       ts.MakePod("ns", "x", ts.WithLabels("app", "web")),
	} {
		t.Run(name, func(t *testing.T) {
			h, _, _ := reservationFixture(t)
			must(t, h.Add(pod))
			if v, _ := h.Reservation(rsvKey); v.Phase != v1alpha1.ReservationReserved {
				t.Errorf("phase %s, want Reserved", v.Phase)
			}
			checkInvariants(t, h)
		})
	}
}

func TestReservation_ForgottenOwnerReReserves(t *testing.T) {
	h, _, _ := reservationFixture(t)
	w := web("w1")
	must(t, h.AssumePod(w))
	expectCharge(t, h, 2000, 0, v1alpha1.ReservationMatched)
	if v, _ := h.Reservation(rsvKey); !v.OwnerAssumed {
		t.Error("owner should be reported as only assumed")
	}
	must(t, h.ForgetPod(w))
	expectCharge(t, h, 2000, 2000, v1alpha1.ReservationReserved)
}

func TestReservation_ExpiredOwnerReReserves(t *testing.T) {
	h, _, clk := reservationFixture(t)
	w := web("w1")
	must(t, h.AssumePod(w))
	must(t, h.FinishBinding(w))
	clk.Step(29 * time.Second)
	if n := h.ExpireAssumedPods(); n != 0 {
		t.Fatalf("expired %d pods before the TTL", n)
	}
	clk.Step(time.Second)
	if n := h.ExpireAssumedPods(); n != 1 {
		t.Fatalf("expired %d pods at the TTL, want 1", n)
	}
	expectCharge(t, h, 2000, 2000, v1alpha1.ReservationReserved)
}

func TestReservation_ConfirmedOwnerDeletedStaysMatched(t *testing.T) {
	h, _, _ := reservationFixture(t)
	w := web("w1")
	must(t, h.AssumePod(w))
	must(t, h.Add(w)) // the API confirms the binding
	must(t, h.Delete(w))
	expectCharge(t, h, 0, 0, v1alpha1.ReservationMatched)
	if v, _ := h.Reservation(rsvKey); v.Owner == nil || v.Owner.Name != "w1" {
		t.Errorf("owner %+v, want ns/w1 kept", v.Owner)
	}
}

func TestReservation_TTLExpiryReleasesThePlaceholderAndTellsTheStatusWriter(t *testing.T) {
	h, _, clk := reservationFixture(t)
	var changed []types.NamespacedName
	h.SetStatusNotifier(func(kind stores.Kind, key types.NamespacedName) {
		if kind == stores.KindReservation {
			changed = append(changed, key)
		}
	})
	clk.Step(59 * time.Second)
	if tr := h.ReapReservations(); len(tr) != 0 {
		t.Fatalf("reaped %v before the TTL", tr)
	}
	clk.Step(time.Second)
	tr := h.ReapReservations()
	if len(tr) != 1 || tr[0].Key != rsvKey || tr[0].To != v1alpha1.ReservationExpired {
		t.Fatalf("transitions %+v, want ns/r to Expired", tr)
	}
	expectCharge(t, h, 0, 0, v1alpha1.ReservationExpired)
	if len(changed) != 1 || changed[0] != rsvKey {
		t.Errorf("status writer told about %v, want [ns/r]", changed)
	}
	// An expired reservation is not consumed by a pod that comes later.
	must(t, h.Add(web("late")))
	expectCharge(t, h, 2000, 0, v1alpha1.ReservationExpired)
}

func TestReservation_PendingUntilANodeIsSet(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	pending := ts.MakeReservation("ns", "r", "", "2", "4Gi", "app", "web")
	must(t, h.Add(pending))
	expectCharge(t, h, 0, 0, v1alpha1.ReservationPending)
	placed := pending.DeepCopy()
	placed.Spec.NodeName = "n1"
	must(t, h.Update(pending, placed))
	expectCharge(t, h, 2000, 2000, v1alpha1.ReservationReserved)
}

func TestReservation_SpecChangeRechargesStatusOnlyChangeDoesNot(t *testing.T) {
	h, r, _ := reservationFixture(t)
	statusOnly := r.DeepCopy()
	statusOnly.Status.Phase = v1alpha1.ReservationReserved
	must(t, h.Update(r, statusOnly))
	before, _ := h.Reservation(rsvKey)
	bigger := statusOnly.DeepCopy()
	bigger.Spec.Resources[corev1.ResourceCPU] = resource.MustParse("3")
	bigger.Spec.TTLSeconds = ptr.To[int64](120)
	must(t, h.Update(statusOnly, bigger))
	expectCharge(t, h, 3000, 3000, v1alpha1.ReservationReserved)
	after, _ := h.Reservation(rsvKey)
	if !after.ReservedAt.Equal(before.ReservedAt) || !after.ExpiresAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("reservedAt %v -> %v, expiresAt %v; want reservedAt kept and the new TTL applied", before.ReservedAt, after.ReservedAt, after.ExpiresAt)
	}
}

func TestReservation_DeleteReleasesEverything(t *testing.T) {
	h, r, _ := reservationFixture(t)
	must(t, h.Delete(r))
	info, _ := h.NodeInfo("n1")
	if !info.Requested.IsZero() || len(info.Placeholders) != 0 {
		t.Errorf("after delete: requested %v placeholders %d", info.Requested.ResourceList(), len(info.Placeholders))
	}
	checkInvariants(t, h)
}

func TestReservation_RestartRecoversFromStatus(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))

	expired := ts.MakeReservation("ns", "expired", "n1", "1", "1Gi", "app", "web")
	expired.Status.Phase = v1alpha1.ReservationExpired
	matched := ts.MakeReservation("ns", "matched", "n1", "1", "1Gi", "app", "web")
	matched.Status.Phase = v1alpha1.ReservationMatched
	matched.Status.CurrentOwner = &v1alpha1.PodReference{Namespace: "ns", Name: "w1"}
	reserved := ts.MakeReservation("ns", "reserved", "n1", "1", "1Gi", "app", "other")
	reserved.Status.Phase = v1alpha1.ReservationReserved
	reserved.Status.ReservedAt = &metav1.Time{Time: t0.Add(-50 * time.Second)}
	for _, r := range []*v1alpha1.Reservation{expired, matched, reserved} {
		must(t, h.Add(r))
	}
	// The owner arrives after its reservation in the relist: it is the owner, nothing more.
	must(t, h.Add(web("w1")))

	info, _ := h.NodeInfo("n1")
	if info.Requested.MilliCPU != 3000 || info.Reserved.MilliCPU != 1000 {
		t.Errorf("requested %dm reserved %dm, want 3000m (w1 + placeholder) and 1000m", info.Requested.MilliCPU, info.Reserved.MilliCPU)
	}
	for name, want := range map[string]v1alpha1.ReservationPhase{
		"expired": v1alpha1.ReservationExpired, "matched": v1alpha1.ReservationMatched, "reserved": v1alpha1.ReservationReserved,
	} {
		if v, _ := h.Reservation(types.NamespacedName{Namespace: "ns", Name: name}); v.Phase != want {
			t.Errorf("%s: phase %s, want %s", name, v.Phase, want)
		}
	}
	if v, _ := h.Reservation(types.NamespacedName{Namespace: "ns", Name: "reserved"}); !v.ExpiresAt.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("recovered deadline %v, want reservedAt from status + TTL", v.ExpiresAt)
	}
	checkInvariants(t, h)
}

func TestReservation_OnlyPodsThatLandedAfterItConsumeItWhenItArrivesLast(t *testing.T) {
	created := metav1.NewTime(t0)
	landed := func(at time.Time) ts.PodOption {
		return func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
		}
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want v1alpha1.ReservationPhase
	}{
		"landed before":        {web("old", landed(t0.Add(-time.Hour))), v1alpha1.ReservationReserved},
		"landed after":         {web("new", landed(t0.Add(time.Second))), v1alpha1.ReservationMatched},
		"landing time unknown": {web("unknown"), v1alpha1.ReservationReserved},
	} {
		t.Run(name, func(t *testing.T) {
			h, _ := newHandler(t)
			must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
			must(t, h.Add(tc.pod))
			r := ts.MakeReservation("ns", "r", "n1", "2", "4Gi", "app", "web")
			r.CreationTimestamp = created
			must(t, h.Add(r))
			if v, _ := h.Reservation(rsvKey); v.Phase != tc.want {
				t.Errorf("phase %s, want %s", v.Phase, tc.want)
			}
			checkInvariants(t, h)
		})
	}
}

func TestReservation_MatchableForPrefersTheOldest(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	young := ts.MakeReservation("ns", "young", "n1", "1", "1Gi", "app", "web")
	young.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	old := ts.MakeReservation("ns", "old", "n1", "1", "1Gi", "app", "web")
	old.CreationTimestamp = metav1.NewTime(t0)
	must(t, h.Add(young))
	must(t, h.Add(old))
	got := h.MatchableReservations(ts.MakePod("ns", "w", ts.WithLabels("app", "web")))
	if len(got) != 2 || got[0].Key.Name != "old" {
		t.Fatalf("matchable %+v, want old first", got)
	}
	must(t, h.Add(web("w")))
	if v, _ := h.Reservation(types.NamespacedName{Namespace: "ns", Name: "old"}); v.Phase != v1alpha1.ReservationMatched {
		t.Errorf("the oldest reservation was not the one consumed")
	}
	if on := h.ReservationsOnNode("n1"); len(on) != 2 {
		t.Errorf("reservations on n1: %d, want 2", len(on))
	}
}

func TestReservation_RestartKeepsTheExpiryOfAnExpiredReservation(t *testing.T) {
	h, _ := newHandler(t)
	expired := ts.MakeReservation("ns", "r", "n1", "1", "1Gi", "app", "web")
	expired.Status.Phase = v1alpha1.ReservationExpired
	expired.Status.ExpiresAt = &metav1.Time{Time: t0.Add(-time.Minute)}
	must(t, h.Add(expired))
	if v, _ := h.Reservation(rsvKey); !v.ExpiresAt.Equal(t0.Add(-time.Minute)) {
		t.Errorf("expires at %v after a restart, want the status's %v (the GC grace counts from it)", v.ExpiresAt, t0.Add(-time.Minute))
	}
}

// TestReservation_ARecreatedPodOfTheSameNameIsNotTheOldOwner replays a pod name reused by a
// new pod while an old reservation still names the old one.
func TestReservation_ARecreatedPodOfTheSameNameIsNotTheOldOwner(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	r1 := ts.MakeReservation("ns", "r1", "n1", "1", "1Gi", "app", "web")
	must(t, h.Add(r1))
	first := web("web-0", ts.WithUID("first"))
	must(t, h.Add(first)) // confirmed owner of r1
	must(t, h.Delete(first))

	r2 := ts.MakeReservation("ns", "r2", "n1", "1", "1Gi", "app", "web")
	must(t, h.Add(r2))
	second := web("web-0", ts.WithUID("second"))
	must(t, h.AssumePod(second)) // assumed owner of r2
	must(t, h.Delete(r1))
	must(t, h.ForgetPod(second))

	v, _ := h.Reservation(types.NamespacedName{Namespace: "ns", Name: "r2"})
	if v.Phase != v1alpha1.ReservationReserved {
		t.Errorf("r2 is %s after its assumed owner was forgotten, want Reserved again", v.Phase)
	}
	checkInvariants(t, h)
}

// TestReservation_PendingPodCreatedBeforeItConsumesItWhenAssumed: a pending pod created
// before a reservation that selects it may consume it (it lands after the reservation was
// created); assumed onto the node it is charged once, forgotten or expired it gives the
// reservation back (same deadline), and the API's binding confirms it.
func TestReservation_PendingPodCreatedBeforeItConsumesItWhenAssumed(t *testing.T) {
	setup := func(t *testing.T) (*Handler, *clocktesting.FakeClock, *corev1.Pod, store.Reservation) {
		t.Helper()
		h, clk := newHandler(t)
		must(t, h.Add(ts.MakeNode("n1", "4", "8Gi")))
		pending := ts.MakePod("ns", "p", ts.Requests("4", "4Gi"), ts.WithLabels("app", "web"),
			ts.CreatedAt(t0.Add(-time.Hour)), ts.WithResourceVersion("1"))
		must(t, h.Add(pending)) // the API reports it pending
		must(t, h.Add(ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "n1", "4", "4Gi", "app", "web"), t0)))
		expectCharge(t, h, 4000, 4000, v1alpha1.ReservationReserved)
		v, _ := h.Reservation(rsvKey)
		return h, clk, pending, v
	}
	onNode := func(p *corev1.Pod) *corev1.Pod {
		c := p.DeepCopy()
		c.Spec.NodeName = "n1"
		return c
	}
	bound := func(p *corev1.Pod, at time.Time) *corev1.Pod {
		c := onNode(p)
		ts.ScheduledAt(at)(c)
		c.ResourceVersion = "2"
		return c
	}
	expectMatchable := func(t *testing.T, h *Handler, pod *corev1.Pod, want int) {
		t.Helper()
		got := h.MatchableReservations(pod)
		if len(got) != want || (want > 0 && got[0].Key != rsvKey) {
			t.Errorf("matchable for %s on %q: %+v, want %d (ns/r)", pod.Name, pod.Spec.NodeName, got, want)
		}
	}
	expectOwner := func(t *testing.T, h *Handler, assumed bool) {
		t.Helper()
		v, _ := h.Reservation(rsvKey)
		if v.Owner == nil || v.Owner.Name != "p" || v.OwnerAssumed != assumed {
			t.Errorf("owner %+v (assumed %v), want ns/p (assumed %v)", v.Owner, v.OwnerAssumed, assumed)
		}
	}

	t.Run("assume, forget, expire, confirm", func(t *testing.T) {
		h, clk, pending, reserved := setup(t)
		expectMatchable(t, h, pending, 1)
		expectMatchable(t, h, onNode(pending), 1)

		must(t, h.AssumePod(onNode(pending)))
		expectCharge(t, h, 4000, 0, v1alpha1.ReservationMatched) // the pod only: 4000m of 4000m
		expectOwner(t, h, true)
		expectMatchable(t, h, onNode(pending), 0) // a pod consumes one reservation

		must(t, h.ForgetPod(onNode(pending)))
		expectCharge(t, h, 4000, 4000, v1alpha1.ReservationReserved)
		if v, _ := h.Reservation(rsvKey); !v.ExpiresAt.Equal(reserved.ExpiresAt) {
			t.Errorf("after forget expires at %v, want the same deadline %v", v.ExpiresAt, reserved.ExpiresAt)
		}

		assumed := onNode(pending)
		must(t, h.AssumePod(assumed))
		must(t, h.FinishBinding(assumed))
		clk.Step(30 * time.Second)
		if n := h.ExpireAssumedPods(); n != 1 {
			t.Fatalf("expired %d assumed pods, want 1", n)
		}
		expectCharge(t, h, 4000, 4000, v1alpha1.ReservationReserved)
		if v, _ := h.Reservation(rsvKey); !v.ExpiresAt.Equal(reserved.ExpiresAt) {
			t.Errorf("after expiry expires at %v, want the same deadline %v", v.ExpiresAt, reserved.ExpiresAt)
		}

		must(t, h.AssumePod(onNode(pending)))
		must(t, h.Add(bound(pending, clk.Now()))) // the API confirms the binding
		expectCharge(t, h, 4000, 0, v1alpha1.ReservationMatched)
		expectOwner(t, h, false)
		if st, _ := h.PodState(types.NamespacedName{Namespace: "ns", Name: "p"}); st.State != store.PodAdded {
			t.Errorf("pod state %s, want Added", st.State)
		}
	})

	t.Run("bound by the API without an assumption", func(t *testing.T) {
		h, clk, pending, _ := setup(t)
		clk.Step(5 * time.Second)
		must(t, h.Update(pending, bound(pending, clk.Now())))
		expectCharge(t, h, 4000, 0, v1alpha1.ReservationMatched)
		expectOwner(t, h, false)
	})
}

// TestReservation_APodAlreadyRunningDoesNotConsumeItInEitherOrder: a pod that landed on
// the node before the reservation was created is not the one it is for, whichever arrives
// first; one that landed after consumes it, whichever arrives first.
func TestReservation_APodAlreadyRunningDoesNotConsumeItInEitherOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		landed time.Time
		want   v1alpha1.ReservationPhase
	}{
		"landed before": {t0.Add(-time.Hour), v1alpha1.ReservationReserved},
		"landed after":  {t0.Add(time.Second), v1alpha1.ReservationMatched},
	} {
		for _, podFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/pod first %v", name, podFirst), func(t *testing.T) {
				h, _ := newHandler(t)
				must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
				pod := web("w", ts.CreatedAt(tc.landed.Add(-time.Minute)), ts.ScheduledAt(tc.landed))
				r := ts.ReservationCreatedAt(ts.MakeReservation("ns", "r", "n1", "2", "4Gi", "app", "web"), t0)
				if podFirst {
					must(t, h.Add(pod))
					must(t, h.Add(r))
				} else {
					must(t, h.Add(r))
					must(t, h.Add(pod))
				}
				if v, _ := h.Reservation(rsvKey); v.Phase != tc.want {
					t.Errorf("phase %s, want %s", v.Phase, tc.want)
				}
				checkInvariants(t, h)
			})
		}
	}
}

// TestReservation_RelistInAnyOrderEndsInTheSamePlace replays, after a restart, a node's
// pods and reservations sharing a selector in every order: the owner a status records
// keeps its reservation, a pod consumes one reservation at most, and unrecorded pairs
// follow the landing rule.
func TestReservation_RelistInAnyOrderEndsInTheSamePlace(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	pod := func(name string, landed int) *corev1.Pod {
		return ts.MakePod("ns", name, ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.WithLabels("app", "web"),
			ts.CreatedAt(at(landed-1)), ts.ScheduledAt(at(landed)))
	}
	rsv := func(name string, created int, status v1alpha1.ReservationStatus) *v1alpha1.Reservation {
		r := ts.ReservationCreatedAt(ts.MakeReservation("ns", name, "n1", "1", "1Gi", "app", "web"), at(created))
		r.Status = status
		return r
	}
	reserved := func(created int) v1alpha1.ReservationStatus {
		return ts.ReservedStatus(at(created), at(created+600))
	}
	p := pod("p", -10)
	for name, tc := range map[string]struct {
		pods  []*corev1.Pod
		rsvs  []*v1alpha1.Reservation
		owner map[string]string // reservation -> owner ("" for Reserved)
	}{
		"the recorded owner keeps its reservation; the younger one stays Reserved": {
			pods:  []*corev1.Pod{p},
			rsvs:  []*v1alpha1.Reservation{rsv("old", -30, ts.MatchedStatus(p, at(-30))), rsv("young", -15, reserved(-15))},
			owner: map[string]string{"old": "p", "young": ""},
		},
		"the recorded owner of the younger one does not take the older one too": {
			pods:  []*corev1.Pod{p},
			rsvs:  []*v1alpha1.Reservation{rsv("old", -30, reserved(-30)), rsv("young", -15, ts.MatchedStatus(p, at(-15)))},
			owner: map[string]string{"old": "", "young": "p"},
		},
		"nothing recorded: the pod takes the oldest": {
			pods:  []*corev1.Pod{p},
			rsvs:  []*v1alpha1.Reservation{rsv("old", -30, reserved(-30)), rsv("young", -15, v1alpha1.ReservationStatus{})},
			owner: map[string]string{"old": "p", "young": ""},
		},
		"pods pair in the order they landed": {
			// q landed between the two reservations: only the old one is for it.
			pods:  []*corev1.Pod{p, pod("q", -20)},
			rsvs:  []*v1alpha1.Reservation{rsv("old", -30, reserved(-30)), rsv("young", -15, reserved(-15))},
			owner: map[string]string{"old": "q", "young": "p"},
		},
		"a pod that was running before both consumes neither": {
			pods:  []*corev1.Pod{pod("early", -40)},
			rsvs:  []*v1alpha1.Reservation{rsv("old", -30, reserved(-30)), rsv("young", -15, reserved(-15))},
			owner: map[string]string{"old": "", "young": ""},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var objects []any
			for _, p := range tc.pods {
				objects = append(objects, p)
			}
			for _, r := range tc.rsvs {
				objects = append(objects, r)
			}
			objects = append(objects, ts.MakeNode("n1", "8", "16Gi"))
			var first string
			for _, order := range permutations(len(objects)) {
				h, _ := newHandler(t)
				for _, i := range order {
					switch o := objects[i].(type) {
					case *corev1.Pod:
						must(t, h.Add(o))
					case *v1alpha1.Reservation:
						must(t, h.Add(o))
					case *corev1.Node:
						must(t, h.Add(o))
					}
				}
				checkInvariants(t, h)
				for rname, want := range tc.owner {
					v, _ := h.Reservation(types.NamespacedName{Namespace: "ns", Name: rname})
					got := ""
					if v.Phase == v1alpha1.ReservationMatched {
						got = v.Owner.Name
					} else if v.Phase != v1alpha1.ReservationReserved {
						t.Errorf("order %v: %s is %s", order, rname, v.Phase)
					}
					if got != want {
						t.Errorf("order %v: %s owned by %q, want %q", order, rname, got, want)
					}
				}
				reservedCPU := int64(0)
				for _, o := range tc.owner {
					if o == "" {
						reservedCPU += 1000
					}
				}
				info, _ := h.NodeInfo("n1")
				if want := int64(1000*len(tc.pods)) + reservedCPU; info.Requested.MilliCPU != want || info.Reserved.MilliCPU != reservedCPU {
					t.Errorf("order %v: n1 requested %dm reserved %dm, want %dm and %dm", order,
						info.Requested.MilliCPU, info.Reserved.MilliCPU, want, reservedCPU)
				}
				if d := canonicalDump(t, h); first == "" {
					first = d
				} else if d != first {
					t.Errorf("order %v ends elsewhere:\n%s\nfirst order:\n%s", order, d, first)
				}
			}
		})
	}
}

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}
