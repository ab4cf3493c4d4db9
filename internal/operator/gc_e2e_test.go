package operator

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/controllers"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// laggingReads is the API server's client whose reads of one reservation answer a copy taken
// earlier, as the manager's cache does before its watch brings the next version.
type laggingReads struct {
	client.Client
	held *v1alpha1.Reservation
}

func (c laggingReads) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.held.DeepCopyInto(obj.(*v1alpha1.Reservation))
	return nil
}

// fixedView answers Reservation with the cache's view of one reservation.
type fixedView struct {
	view store.Reservation
}

func (f *fixedView) Reservation(types.NamespacedName) (store.Reservation, bool) {
	return f.view, true
}

// TestReservationGC_AReservationChangedSinceTheDecisionIsNotDeleted: the GC decides from the
// cache's copy of an Expired reservation past its grace; meanwhile its owner extended its TTL
// on the API server. The delete must not remove the changed reservation (a resourceVersion
// precondition besides the UID), and once the cache holds the new version the GC decides
// again on it.
func TestReservationGC_AReservationChangedSinceTheDecisionIsNotDeleted(t *testing.T) {
	ns := newNamespace(t)
	create(t, ts.MakeReservation(ns, "expired", "n1", "1", "1Gi", "app", "web"))
	key := types.NamespacedName{Namespace: ns, Name: "expired"}
	now := time.Now().Truncate(time.Second)
	read := func() *v1alpha1.Reservation {
		t.Helper()
		r := &v1alpha1.Reservation{}
		if err := env.Client.Get(ctx(), key, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	live := read()
	view := &fixedView{view: store.Reservation{Key: key, Reservation: live, Phase: v1alpha1.ReservationExpired, Node: "n1",
		ReservedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}}
	gc := &controllers.ReservationStatusReconciler{Client: env.Client, Reader: view, Clock: clocktesting.NewFakePassiveClock(now),
		GCGrace: 2 * time.Hour}
	req := ctrl.Request{NamespacedName: key}
	if _, err := gc.Reconcile(ctx(), req); err != nil { // writes Expired, within the grace
		t.Fatal(err)
	}
	decided := read()
	if decided.Status.Phase != v1alpha1.ReservationExpired {
		t.Fatalf("status %+v, want Expired written", decided.Status)
	}

	extended := decided.DeepCopy()
	extended.Spec.TTLSeconds = ptr.To[int64](3600)
	if err := env.Client.Update(ctx(), extended); err != nil {
		t.Fatal(err)
	}
	gc.GCGrace = 0
	gc.Client = laggingReads{Client: env.Client, held: decided}
	view.view.Reservation = decided
	res, err := gc.Reconcile(ctx(), req)
	if err != nil || res.RequeueAfter == 0 {
		t.Errorf("result %+v, %v; want a requeue to decide again, no error", res, err)
	}
	if got := read(); got.Spec.TTLSeconds == nil {
		t.Fatalf("the reservation is %+v, want the owner's TTL", got.Spec)
	}

	// The cache catches up (here, the view stays Expired): the GC writes the conditions of
	// the new generation, then, once the cache holds that write, deletes that version.
	for range 2 {
		caughtUp := read()
		gc.Client, view.view.Reservation = laggingReads{Client: env.Client, held: caughtUp}, caughtUp
		if _, err := gc.Reconcile(ctx(), req); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Get(ctx(), key, &v1alpha1.Reservation{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the cache caught up: %v, want the reservation deleted", err)
	}
}
