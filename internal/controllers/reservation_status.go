package controllers

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ReservationStatusReconciler writes Reservation status from the cache (leader only) and
// deletes Expired reservations once GCGrace has passed since they expired.
//
// Pending without a node; Reserved once charged (reservedAt, expiresAt); Matched with
// currentOwner once a matching pod is bound to the node (while the pod is only assumed the
// status stays Reserved: the match can still be undone); Expired when the TTL ran out
// unmatched.
type ReservationStatusReconciler struct {
	Client   client.Client
	Reader   reservationReader
	Clock    clock.PassiveClock
	GCGrace  time.Duration
	Recorder events.EventRecorder
}

// Reconcile implements reconcile.Reconciler.
func (r *ReservationStatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rsv := &v1alpha1.Reservation{}
	view, ok, err := readForStatus(ctx, r.Client, req.NamespacedName, rsv, func() (store.Reservation, client.Object, bool) {
		v, found := r.Reader.Reservation(req.NamespacedName)
		return v, v.Reservation, found
	})
	if !ok {
		return ctrl.Result{}, err
	}
	wrote, err := writeStatus(ctx, r.Client, rsv,
		func(cur *v1alpha1.Reservation) (*v1alpha1.Reservation, error) {
			if view.Reservation.ResourceVersion != cur.ResourceVersion {
				// The view is not of the object the status goes on (a leader that just took
				// over may still be applying the old leader's last writes; a conflict's
				// fresh read may be newer than the view): it would overwrite the times they
				// record.
				return nil, errViewBehind
			}
			next := cur.DeepCopy()
			next.Status = reservationStatus(cur.Status, view)
			next.Status.Conditions = setConditions(cur.Status.Conditions, cur.Generation, r.Clock.Now(),
				conditionsOf(next.Status, view)...)
			return next, nil
		})
	if errors.Is(err, errViewBehind) {
		// The store notifies this writer when it applies the object; the requeue is a
		// backstop.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if next := reservationStatus(rsv.Status, view).Phase; wrote && next != rsv.Status.Phase && r.Recorder != nil {
		r.Recorder.Eventf(rsv, nil, "Normal", string(next), "PhaseChange", "%s", reservationEventNote(next, view))
	}
	if view.Phase != v1alpha1.ReservationExpired || wrote {
		// A status just written changed the object's version: the collection is decided on
		// the written object, which the watch brings back.
		return ctrl.Result{}, nil
	}
	return r.collect(ctx, rsv, view)
}

// collect deletes an Expired reservation once the grace period has passed: the very version
// the decision was made on (UID and resourceVersion preconditions). A reservation changed
// since (its TTL or selector edited, a status written by another replica) is not deleted: the
// decision is taken again on the new version once the cache holds it.
func (r *ReservationStatusReconciler) collect(ctx context.Context, rsv *v1alpha1.Reservation, view store.Reservation) (ctrl.Result, error) {
	expired := view.ExpiresAt
	if expired.IsZero() && rsv.Status.ExpiresAt != nil {
		expired = rsv.Status.ExpiresAt.Time
	}
	if wait := expired.Add(r.GCGrace).Sub(r.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	uid, version := rsv.UID, rsv.ResourceVersion
	log := ctrl.LoggerFrom(ctx).WithValues("resourceVersion", version)
	switch err := r.Client.Delete(ctx, rsv, client.Preconditions{UID: &uid, ResourceVersion: &version}); {
	case apierrors.IsConflict(err):
		// The store notifies this writer when it applies the new version; the requeue is a
		// backstop.
		log.V(1).Info("not deleting an expired reservation changed since it was read; deciding again on the new version")
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	log.Info("deleted expired reservation after the grace period", "grace", r.GCGrace)
	return ctrl.Result{}, nil
}

// reservationStatus derives the status of a reservation from the cache's view of it,
// keeping the conditions others may have set.
func reservationStatus(cur v1alpha1.ReservationStatus, v store.Reservation) v1alpha1.ReservationStatus {
	phase := v.Phase
	if phase == v1alpha1.ReservationMatched && v.OwnerAssumed {
		phase = v1alpha1.ReservationReserved
	}
	next := v1alpha1.ReservationStatus{Phase: phase, ReservedAt: apiTime(v.ReservedAt), Conditions: cur.Conditions}
	switch phase {
	case v1alpha1.ReservationReserved, v1alpha1.ReservationExpired:
		next.ExpiresAt = apiTime(v.ExpiresAt)
	case v1alpha1.ReservationMatched:
		owner := *v.Owner
		next.CurrentOwner = &owner
	}
	return next
}

// errViewBehind: the cache's view of a reservation is of another version than the object
// its status would go on.
var errViewBehind = errors.New("the cache's view is not of the current object")

// statusLags reports whether a reservation's recorded status is behind the cache's view of
// it (phase, owner or times; the conditions follow from those). A hold is not an API object
// yet.
func statusLags(v store.Reservation) bool {
	if v.Provisional || v.Reservation == nil {
		return false
	}
	cur := v.Reservation.Status
	return !equality.Semantic.DeepEqual(reservationStatus(cur, v), cur)
}

// replacedPod is the deleted pod a replacement Reservation keeps the place of ("" for an
// ordinary reservation).
func replacedPod(v store.Reservation) string {
	if v.Reservation == nil {
		return ""
	}
	return v.Reservation.Annotations[v1alpha1.ReplacesPodAnnotation]
}

// conditionsOf is reservationConditions, told about what the status alone does not say: a
// node the cache does not know (Pending, NodeNotFound) and a deleted pod's place released
// because its owner no longer wants a replacement.
func conditionsOf(st v1alpha1.ReservationStatus, v store.Reservation) []metav1.Condition {
	switch {
	case st.Phase == v1alpha1.ReservationPending && v.AwaitingNode != "":
		msg := "node " + v.AwaitingNode + " does not exist (no Node, NMNode or CustomNodeResource of that name): nothing is held until it appears; check spec.nodeName"
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, false, "NodeNotFound", msg),
			condition(v1alpha1.ReservationConditionMatched, false, "NodeNotFound", "not placed on a node yet"),
			condition(v1alpha1.ReservationConditionExpired, false, "NodeNotFound", "the TTL starts when the reservation is placed"),
		}
	case st.Phase == v1alpha1.ReservationExpired && strings.HasPrefix(v.Why, "released"):
		msg := v.Why + "; the resources on node " + v.Node + " were released"
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, false, "ReleasedScaleDown", msg),
			condition(v1alpha1.ReservationConditionMatched, false, "ReleasedScaleDown", "no replacement is coming"),
			condition(v1alpha1.ReservationConditionExpired, true, "ReleasedScaleDown", msg),
		}
	}
	return reservationConditions(st, v.Node)
}

// reservationEventNote says what a reservation's new phase means.
func reservationEventNote(phase v1alpha1.ReservationPhase, v store.Reservation) string {
	switch phase {
	case v1alpha1.ReservationReserved:
		return "resources held on node " + v.Node
	case v1alpha1.ReservationMatched:
		note := "consumed on node " + v.Node
		if v.Owner != nil {
			note = "consumed by pod " + v.Owner.Namespace + "/" + v.Owner.Name + " on node " + v.Node
		}
		if pod := replacedPod(v); pod != "" {
			note += ", the replacement of deleted pod " + pod
		}
		return note
	case v1alpha1.ReservationExpired:
		if strings.HasPrefix(v.Why, "released") {
			// A deleted pod's place its owner no longer wants a replacement for.
			return v.Why + "; resources on " + v.Node + " released"
		}
		return "TTL ran out with no matching pod; resources on " + v.Node + " released"
	}
	if v.AwaitingNode != "" {
		return "node " + v.AwaitingNode + " does not exist; nothing is held until it appears"
	}
	return "waiting for a node (spec.nodeName)"
}
