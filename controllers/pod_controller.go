package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	if found && r.Keep != nil {
		if found, err = r.Keep(ctx, pod); err != nil {
			return ctrl.Result{}, err
		}
	}
	st, seen := r.Handler.PodState(req.NamespacedName)
	h := r.Handler
	switch {
	case !found && seen:
		report(ctx, stores.KindPod, h.DeletePod(st.Pod))
	case !found:
	case !seen:
		report(ctx, stores.KindPod, h.AddPod(pod))
	case st.APIPod != nil && st.APIPod.UID != pod.UID, st.APIPod == nil && st.Pod.UID != pod.UID:
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

// podsOnNode lists the keys of the pods bound to a node, through the spec.nodeName index.
func podsOnNode(ctx context.Context, reader client.Reader, node string) []types.NamespacedName {
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.MatchingFields{podNodeNameField: node}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the pods of a node", "node", node)
		return nil
	}
	keys := make([]types.NamespacedName, len(pods.Items))
	for i := range pods.Items {
		keys[i] = types.NamespacedName{Namespace: pods.Items[i].Namespace, Name: pods.Items[i].Name}
	}
	return keys
}

// podNodeNameField indexes pods by spec.nodeName.
const podNodeNameField = "spec.nodeName"
