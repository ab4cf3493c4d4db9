package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// PodReconciler feeds pods to the cache. It is the feed of the other kinds plus the
// assumed-pod state: for a pod a scheduler assumed, what the API reports is compared with
// the API's last copy (PodStatus.APIPod), and a pod the API reports bound confirms the
// assumption.
type PodReconciler struct {
	Reader  client.Reader
	Handler *handler.Handler
	// Keep, when set, filters pods out (a sub-cluster keeps only pods bound to its nodes).
	Keep func(context.Context, *corev1.Pod) (bool, error)
}

// Reconcile implements reconcile.Reconciler.
func (r *PodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	err := r.Reader.Get(ctx, req.NamespacedName, pod)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	found := err == nil
	st, seen := r.Handler.PodState(req.NamespacedName)
	if found && r.Keep != nil {
		keep, err := r.Keep(ctx, pod)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !keep && seen && st.State == stores.PodAssumed && pod.Spec.NodeName == "" {
			// Filtered out only because the API has not bound it yet: the assumption stands.
			return ctrl.Result{}, nil
		}
		found = keep
	}
	h := r.Handler
	switch {
	case !found && seen:
		report(ctx, stores.KindPod, h.DeletePod(st.Pod))
	case !found:
	case !seen:
		report(ctx, stores.KindPod, h.AddPod(pod))
	case st.APIPod != nil && st.APIPod.UID != pod.UID, st.APIPod == nil && st.Pod.UID != "" && st.Pod.UID != pod.UID:
		report(ctx, stores.KindPod, h.DeletePod(st.Pod))
		report(ctx, stores.KindPod, h.AddPod(pod))
	case st.State == stores.PodAssumed && (pod.Spec.NodeName != "" || st.APIPod == nil):
		// The API confirms the assumption (bound), or reports the pod for the first time.
		report(ctx, stores.KindPod, h.AddPod(pod))
	case st.APIPod.ResourceVersion != pod.ResourceVersion:
		report(ctx, stores.KindPod, h.UpdatePod(st.APIPod, pod))
	}
	return ctrl.Result{}, nil
}

// onNode lists, through the spec.nodeName index, the requests of the objects of a list
// kind bound to a node.
func onNode(ctx context.Context, reader client.Reader, list client.ObjectList, node string) []reconcile.Request {
	if err := reader.List(ctx, list, client.MatchingFields{nodeNameField: node}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the objects of a node", "node", node)
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		return nil
	})
	return reqs
}

// nodeNameField indexes pods and reservations by spec.nodeName.
const nodeNameField = "spec.nodeName"
