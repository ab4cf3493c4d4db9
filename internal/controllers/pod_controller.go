package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// podSync applies pods to the cache. It is the feed of the other kinds plus the assumed-pod
// state: for a pod a scheduler assumed, what the API reports is compared with the API's last
// copy (PodStatus.APIPod), and a pod the API reports bound confirms the assumption. The
// decision and the event are one step of the handler (Handler.Sync), so a ForgetPod or an
// expiry cannot come between reading the pod's state and applying it.
type podSync struct {
	handler *handler.Handler
	log     logr.Logger
	// keep, when set, filters pods out (a sub-cluster keeps only pods bound to its nodes).
	keep func(context.Context, *corev1.Pod) (bool, error)
	// vanished, when set, decides what a pod the informer no longer holds means (a shard: a
	// pod being bound is between the unbound watch and its node's, see nodepods.Set): the
	// pod as the API holds it (nil: deleted), or retry to look again later.
	vanished func(context.Context, types.NamespacedName) (pod *corev1.Pod, retry bool, err error)
}

// apply is the pod feed's apply. A rejection the pod's state could cause is retried (the
// state may move, and the next notification may be long in coming); an invalid object is
// only reported.
func (r *podSync) apply(ctx context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error) {
	apiPod, _ := obj.(*corev1.Pod)
	if d == handler.Deleted {
		// The pod a delete notification names goes, if it is the one cached (not filtered:
		// whatever scope it had, the cache must not keep it).
		return 0, r.report(r.handler.Sync(key, apiPod, true, d))
	}
	if apiPod == nil && r.vanished != nil {
		pod, retry, err := r.vanished(ctx, key)
		if err != nil {
			return 0, err
		}
		if retry {
			// Left untouched in the cache (assumed or not) until its node's watch reports it.
			return vanishedRetry, nil
		}
		if pod != nil {
			// Out of the shard (its node left, or it was bound to another shard's node):
			// decided now, without a read that could fail and have the retry take the pod,
			// which Vanished forgets once reported, for deleted.
			return 0, r.report(r.handler.Sync(key, pod, false, handler.Current))
		}
	}
	inScope := true
	if apiPod != nil && r.keep != nil {
		// Outside the handler's lock: it reads the manager's cache, not the handler's.
		keep, err := r.keep(ctx, apiPod)
		if err != nil {
			return 0, err
		}
		inScope = keep
	}
	return 0, r.report(r.handler.Sync(key, apiPod, inScope, d))
}

// report returns a rejection worth a retry and logs the others.
func (r *podSync) report(err error) error {
	if handler.Retryable(err) {
		return err
	}
	report(r.log, stores.KindPod, err)
	return nil
}

// podChanged passes an update when the resource version moved or when the informer holds a
// new object of the same version (a relist decodes every object again): the cache holds the
// informer's own objects and must take the new ones, lest the old ones be kept alive. A
// resync hands the same object again and is filtered out.
//
// Kept: comparing versions only would leave the cache holding the old objects after a
// relist, 63% more live heap at 150,000 pods (BenchmarkFeed_RelistOf150000Pods, version-only);
// TestInformer_ARelistHandsANewObjectOfTheSameVersion and TestInformer_AResyncHandsTheSameObject
// fail if client-go's informer stops handing over a new object on a relist or the same on a
// resync.
func podChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetResourceVersion() != newObj.GetResourceVersion() || oldObj != newObj
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
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
	return reqs
}

// vanishedRetry is how soon a pod between two watches of a shard is looked at again (its
// node's watch enqueues it too when it reports it).
const vanishedRetry = 200 * time.Millisecond

// nodeNameField indexes pods and reservations by spec.nodeName.
const nodeNameField = "spec.nodeName"
