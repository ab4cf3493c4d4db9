package controllers

import (
	"context"
	"time"

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
// assumption. The decision and the event are one step of the handler (Handler.SyncPod), so
// a ForgetPod or an expiry cannot come between reading the pod's state and applying it.
type PodReconciler struct {
	Reader  client.Reader
	Handler *handler.Handler
	// Keep, when set, filters pods out (a sub-cluster keeps only pods bound to its nodes).
	Keep func(context.Context, *corev1.Pod) (bool, error)
	// Lookup, when set, reads the pod from its informer without a copy (see sharedLookup);
	// otherwise Reader does.
	Lookup func(types.NamespacedName) (*corev1.Pod, bool, error)
	// Vanished, when set, decides what a pod the reader no longer holds means (a shard: a
	// pod being bound is between the unbound watch and its node's, see nodepods.Set): the
	// pod as the API holds it (nil: deleted), or retry to look again later.
	Vanished func(context.Context, types.NamespacedName) (pod *corev1.Pod, retry bool, err error)
}

// Reconcile implements reconcile.Reconciler. A rejection the pod's state could cause
// requeues the key (the state may move, and the resync would be filtered out); an invalid
// object is only reported.
func (r *PodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	apiPod, err := r.get(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if apiPod == nil && r.Vanished != nil {
		pod, retry, err := r.Vanished(ctx, req.NamespacedName)
		if err != nil {
			return ctrl.Result{}, err
		}
		if retry {
			// Left untouched in the cache (assumed or not) until its node's watch reports it.
			return ctrl.Result{RequeueAfter: vanishedRetry}, nil
		}
		apiPod = pod
	}
	inScope := true
	if apiPod != nil && r.Keep != nil {
		// Outside the handler's lock: it reads the manager's cache, not the handler's.
		keep, err := r.Keep(ctx, apiPod)
		if err != nil {
			return ctrl.Result{}, err
		}
		inScope = keep
	}
	err = r.Handler.SyncPod(req.NamespacedName, apiPod, inScope)
	if handler.Retryable(err) {
		return ctrl.Result{}, err
	}
	report(ctx, stores.KindPod, err)
	return ctrl.Result{}, nil
}

// get returns the API's pod, nil when it is gone.
func (r *PodReconciler) get(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	if r.Lookup != nil {
		pod, ok, err := r.Lookup(key)
		if !ok {
			pod = nil
		}
		return pod, err
	}
	pod := &corev1.Pod{}
	if err := r.Reader.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return pod, nil
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

// vanishedRetry is how soon a pod between two watches of a shard is looked at again (its
// node's watch enqueues it too when it reports it).
const vanishedRetry = 200 * time.Millisecond

// nodeNameField indexes pods and reservations by spec.nodeName.
const nodeNameField = "spec.nodeName"

// CachedVersion reports the resource version of the API's pod the cache holds under key
// (an assumed pod the API never reported holds none).
func (r *PodReconciler) CachedVersion(key types.NamespacedName) (string, bool) {
	st, ok := r.Handler.PodState(key)
	if !ok || st.APIPod == nil {
		return "", false
	}
	return st.APIPod.ResourceVersion, true
}
