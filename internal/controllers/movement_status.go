package controllers

import (
	"context"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
)

// MovementStatusReconciler writes Movement status from the cache (leader only): per owner
// and node the pods that consumed the movement, and this component among the schedulers
// that have seen it.
type MovementStatusReconciler struct {
	Client        client.Client
	Reader        handler.Reader
	ComponentName string
}

// Reconcile implements reconcile.Reconciler.
func (r *MovementStatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Movement{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	view, ok := r.Reader.Movement(req.Name)
	if !ok || view.Movement == nil || view.Movement.UID != m.UID {
		return ctrl.Result{}, nil // the cache has not seen this object yet; it will notify us
	}
	_, err := writeStatus(ctx, r.Client, m,
		func(o *v1alpha1.Movement) any { return o.Status },
		func(cur *v1alpha1.Movement) *v1alpha1.Movement {
			next := cur.DeepCopy()
			next.Status = movementStatus(cur.Status, view, r.ComponentName)
			return next
		})
	return ctrl.Result{}, err
}

// movementStatus lists, owner by owner, the nodes where pods that consumed the movement
// landed, and adds component to the notified schedulers.
func movementStatus(cur v1alpha1.MovementStatus, view movementstore.MovementView, component string) v1alpha1.MovementStatus {
	next := v1alpha1.MovementStatus{NotifiedSchedulers: slices.Clone(cur.NotifiedSchedulers)}
	if !slices.Contains(next.NotifiedSchedulers, component) {
		next.NotifiedSchedulers = append(next.NotifiedSchedulers, component)
		slices.Sort(next.NotifiedSchedulers)
	}
	for _, o := range view.Owners {
		ownerStatus := v1alpha1.MovementOwnerStatus{Owner: o.Owner}
		for _, n := range o.Nodes {
			if len(n.Actual) > 0 {
				ownerStatus.Nodes = append(ownerStatus.Nodes, v1alpha1.MovementNode{Node: n.Node, ActualPods: n.Actual})
			}
		}
		next.Owners = append(next.Owners, ownerStatus)
	}
	return next
}
