package controllers

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// fixedReservation answers Reservation from a fixed view.
type fixedReservation struct {
	view store.Reservation
}

func (r *fixedReservation) Reservation(types.NamespacedName) (store.Reservation, bool) {
	return r.view, true
}

// writtenByTheOldLeader is a reservation whose status the old leader wrote Reserved at
// leaders, in a fake API: the object as the API holds it (live), and as a cache that has not
// applied that write holds it (before: no status, an older resourceVersion).
func writtenByTheOldLeader(t *testing.T) (c client.WithWatch, leaders time.Time, live, before *v1alpha1.Reservation) {
	t.Helper()
	leaders = time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	recorded := &v1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", UID: "u"},
		Spec: v1alpha1.ReservationSpec{NodeName: "n1"},
		Status: v1alpha1.ReservationStatus{Phase: v1alpha1.ReservationReserved,
			ReservedAt: ptr.To(metav1.NewTime(leaders)), ExpiresAt: ptr.To(metav1.NewTime(leaders.Add(time.Minute)))}}
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(recorded).WithStatusSubresource(recorded).Build()
	live = &v1alpha1.Reservation{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(recorded), live); err != nil {
		t.Fatal(err)
	}
	before = live.DeepCopy()
	before.Status = v1alpha1.ReservationStatus{}
	before.ResourceVersion = "1"
	return c, leaders, live, before
}

// TestReservationStatus_ALeaderWhoseCacheLagsTheObjectWritesNothing: found by the short
// chaos run. A standby that just took the lead still holds its own reservedAt for a
// reservation whose status the killed leader wrote a moment before; its cache has not
// applied that write yet. Writing from that view would move the recorded reservedAt; the
// writer waits until the cache holds the object it writes on.
func TestReservationStatus_ALeaderWhoseCacheLagsTheObjectWritesNothing(t *testing.T) {
	ctx := context.Background()
	c, leaders, live, before := writtenByTheOldLeader(t)
	own := leaders.Add(time.Second)
	reader := &fixedReservation{view: store.Reservation{Key: types.NamespacedName{Namespace: "ns", Name: "r"},
		Reservation: before, Phase: v1alpha1.ReservationReserved, Node: "n1", ReservedAt: own, ExpiresAt: own.Add(time.Minute)}}
	r := &ReservationStatusReconciler{Client: c, Reader: reader, Clock: clocktesting.NewFakePassiveClock(own)}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "r"}}
	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Reservation{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if !got.Status.ReservedAt.Time.Equal(leaders) || res.RequeueAfter == 0 {
		t.Errorf("reservedAt %v (requeue after %v), want the recorded %v kept and a requeue", got.Status.ReservedAt, res.RequeueAfter, leaders)
	}
	// Once the cache holds the object (and so the recorded times), the writer writes.
	reader.view.Reservation = live
	reader.view.ReservedAt, reader.view.ExpiresAt = leaders, leaders.Add(time.Minute)
	reader.view.Phase = v1alpha1.ReservationMatched
	reader.view.Owner = &v1alpha1.PodReference{Namespace: "ns", Name: "p", UID: "pu"}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.ReservationMatched || !got.Status.ReservedAt.Time.Equal(leaders) {
		t.Errorf("%s reserved at %v, want Matched at the recorded %v", got.Status.Phase, got.Status.ReservedAt, leaders)
	}
}

// TestReservationStatus_AConflictsFreshReadNewerThanTheViewWritesNothing: found in review.
// The view and the first read agree (both from before the old leader's last write), the
// patch conflicts with that write, and the retry's fresh read is newer than the view: the
// writer must not patch the view over the old leader's times, and asks to come back.
func TestReservationStatus_AConflictsFreshReadNewerThanTheViewWritesNothing(t *testing.T) {
	ctx := context.Background()
	base, leaders, _, before := writtenByTheOldLeader(t)
	gets := 0
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			gets++
			if gets == 1 { // the informer still holds the object from before the old leader's write
				before.DeepCopyInto(o.(*v1alpha1.Reservation))
				return nil
			}
			return cl.Get(ctx, key, o, opts...)
		},
	})
	own := leaders.Add(time.Second)
	reader := &fixedReservation{view: store.Reservation{Key: types.NamespacedName{Namespace: "ns", Name: "r"},
		Reservation: before, Phase: v1alpha1.ReservationReserved, Node: "n1", ReservedAt: own, ExpiresAt: own.Add(time.Minute)}}
	r := &ReservationStatusReconciler{Client: c, Reader: reader, Clock: clocktesting.NewFakePassiveClock(own)}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "r"}}
	res, err := r.Reconcile(ctx, req)
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("result %+v, %v; want a requeue, no error", res, err)
	}
	got := &v1alpha1.Reservation{}
	if err := base.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if !got.Status.ReservedAt.Time.Equal(leaders) {
		t.Errorf("the old leader's reservedAt was overwritten by the stale view")
	}
}

// TestWriteStatus_OneReadPerWriteAndAFreshOneAfterAConflict: a status write patches from
// the object the writer just read (no second GET), and reads again only when another
// writer got there first.
func TestWriteStatus_OneReadPerWriteAndAFreshOneAfterAConflict(t *testing.T) {
	ctx := context.Background()
	obj := &v1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", UID: "u"}}
	var gets, patches int
	base := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(obj).WithStatusSubresource(obj).Build()
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			gets++
			return cl.Get(ctx, key, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return cl.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	read := &v1alpha1.Reservation{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
		t.Fatal(err)
	}
	setPhase := func(p v1alpha1.ReservationPhase) func(*v1alpha1.Reservation) (*v1alpha1.Reservation, error) {
		return func(cur *v1alpha1.Reservation) (*v1alpha1.Reservation, error) {
			next := cur.DeepCopy()
			next.Status.Phase = p
			return next, nil
		}
	}
	gets = 0
	if wrote, err := writeStatus(ctx, c, read, setPhase(v1alpha1.ReservationReserved)); err != nil || !wrote {
		t.Fatalf("wrote %v, %v", wrote, err)
	}
	if gets != 0 || patches != 1 {
		t.Errorf("%d reads and %d patches for one write from a fresh read, want 0 and 1", gets, patches)
	}
	// read is stale now (its resourceVersion is the old one): the patch conflicts, the
	// writer reads again and writes.
	gets, patches = 0, 0
	if wrote, err := writeStatus(ctx, c, read, setPhase(v1alpha1.ReservationExpired)); err != nil || !wrote {
		t.Fatalf("after a conflict: wrote %v, %v", wrote, err)
	}
	got := &v1alpha1.Reservation{}
	if err := base.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if gets != 1 || patches != 2 || got.Status.Phase != v1alpha1.ReservationExpired {
		t.Errorf("%d reads, %d patches, phase %s; want 1 read, 2 patches (one conflict), Expired", gets, patches, got.Status.Phase)
	}
}
