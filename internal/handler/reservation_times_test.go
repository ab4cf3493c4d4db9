package handler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestReservation_AStandbyAdoptsTheTimesAndTheExpiryTheLeaderRecorded: replicas place a
// reservation by their own clocks; the status the leader wrote is what every replica keeps
// (chaos D2: a new leader otherwise rewrites reservedAt, or writes Reserved over Expired).
func TestReservation_AStandbyAdoptsTheTimesAndTheExpiryTheLeaderRecorded(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.AddNode(ts.MakeNode("n1", "8", "16Gi")))
	pending := ts.MakeReservation("ns", "r", "", "2", "1Gi", "app", "x")
	pending.ResourceVersion = "1"
	must(t, h.AddReservation(pending))
	key := types.NamespacedName{Namespace: "ns", Name: "r"}

	// This replica sees the node named at its own time...
	clk.Step(300 * time.Millisecond)
	placed := pending.DeepCopy()
	placed.Spec.NodeName, placed.ResourceVersion = "n1", "2"
	must(t, h.UpdateReservation(pending, placed))
	v, _ := h.Reservation(key)
	if v.Phase != v1alpha1.ReservationReserved || !v.ReservedAt.Equal(t0) {
		t.Fatalf("placed: %s at %v", v.Phase, v.ReservedAt)
	}
	// ...the leader placed it a second later and wrote so.
	leaders := t0.Add(time.Second)
	recorded := placed.DeepCopy()
	recorded.ResourceVersion = "3"
	recorded.Status = ts.ReservedStatus(leaders, leaders.Add(time.Minute))
	must(t, h.UpdateReservation(placed, recorded))
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
	must(t, h.UpdateReservation(recorded, expired))
	v, _ = h.Reservation(key)
	info, _ := h.NodeInfo("n1")
	if v.Phase != v1alpha1.ReservationExpired || info.Reserved.MilliCPU != 0 || info.Requested.MilliCPU != 0 {
		t.Errorf("after the leader's Expired: %s, node reserved %dm requested %dm", v.Phase, info.Reserved.MilliCPU, info.Requested.MilliCPU)
	}
	checkInvariants(t, h)
}
