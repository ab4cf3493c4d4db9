package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// ReplacementReconciler creates, for every hold the cache placed when a pod annotated
// multicache.dev/reserve-on-delete was deleted, the Reservation that keeps its place for
// its replacement (reservationstore.Replacement: same node, the deleted pod's requests, a
// selector of the owner's pods, owned by the owner, Reserved from the deletion for
// --reservation-ttl). The cache's hold has that Reservation's name; when the feed brings
// the Reservation it takes the hold over. Leader only, through the fenced client, once the
// cache caught up: a hold a standby placed is created by the leader, which placed its own.
type ReplacementReconciler struct {
	Client   client.Client
	Reader   reservationReader
	Recorder events.EventRecorder
}

// Reconcile implements reconcile.Reconciler.
func (r *ReplacementReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	view, ok := r.Reader.Reservation(req.NamespacedName)
	if !ok || !view.Provisional || view.Reservation == nil {
		return ctrl.Result{}, nil // taken over by its Reservation, or dropped at its deadline
	}
	// Created even when the hold is due or consumed: the Reservation records what became of
	// the place (the reaper expires it at once, or it records the replacement's match).
	rsv := view.Reservation.DeepCopy()
	rsv.UID, rsv.ResourceVersion, rsv.CreationTimestamp = "", "", metav1.Time{}
	rsv.Status = v1alpha1.ReservationStatus{}
	log := ctrl.LoggerFrom(ctx).WithValues("node", rsv.Spec.NodeName, "pod", rsv.Annotations[v1alpha1.ReplacesPodAnnotation])
	switch err := r.Client.Create(ctx, rsv); {
	case apierrors.IsAlreadyExists(err):
		return ctrl.Result{}, nil // created before (a restart, another leader): the feed brings it
	case err != nil:
		log.Error(err, "creating the Reservation that keeps a deleted pod's place; the place is held until its TTL meanwhile",
			"expiresAt", view.ExpiresAt)
		return ctrl.Result{}, err
	}
	log.Info("created the Reservation that keeps a deleted pod's place for its replacement", "expiresAt", view.ExpiresAt)
	if r.Recorder != nil {
		r.Recorder.Eventf(rsv, nil, "Normal", "PlaceKept", "Create",
			"keeps the place of deleted pod %s on node %s for its replacement until %s: %s",
			rsv.Annotations[v1alpha1.ReplacesPodAnnotation], rsv.Spec.NodeName, view.ExpiresAt.UTC().Format("15:04:05"), view.Why)
	}
	return ctrl.Result{}, nil
}

// setupReplacements registers the replacement controller (leader only, gated on the
// catch-up, writing through c, the fenced client). Its source is the cache's new holds
// (through the notifier), and every hold already placed when it starts (a new leader
// creates what the old one did not).
func setupReplacements(mgr manager.Manager, h *handler.Handler, n *Notifier, opts Options, c client.Client) error {
	r := &ReplacementReconciler{Client: c, Reader: h, Recorder: opts.Recorder}
	return ctrl.NewControllerManagedBy(mgr).Named("reservation-replacement").
		WatchesRawSource(n.source(reservationstore.HoldKind, h.ReservationHolds)).
		Complete(opts.CatchUp.Gate(r))
}
