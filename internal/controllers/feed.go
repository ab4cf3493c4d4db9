package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// feed is the reconciler of one kind that feeds the cache. It reads the current object (or
// NotFound) and the handler's last-seen copy and calls exactly one of Add, Update(last seen,
// current) or Delete(last seen) — or nothing when the resource version did not move, so a
// resync produces no event. A delete carries the object the stores were charged with even
// when the informer lost the final state.
//
// Handler errors are typed, counted and logged by the handler and mean the event is
// invalid; retrying cannot fix them, so they do not requeue.
type feed[T client.Object] struct {
	reader   client.Reader
	kind     stores.Kind
	newObj   func() T
	lastSeen func(types.NamespacedName) (T, bool)
	add      func(T) error
	update   func(oldObj, newObj T) error
	del      func(T) error
	// keep, when set, filters objects out of the cache (a sub-cluster keeps only its nodes).
	keep func(context.Context, T) (bool, error)
}

// Reconcile implements reconcile.Reconciler.
func (f *feed[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := f.newObj()
	err := f.reader.Get(ctx, req.NamespacedName, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	found := err == nil
	if found && f.keep != nil {
		if found, err = f.keep(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	last, seen := f.lastSeen(req.NamespacedName)
	switch {
	case !found && seen:
		report(ctx, f.kind, f.del(last))
	case !found:
	case !seen:
		report(ctx, f.kind, f.add(obj))
	case last.GetUID() != obj.GetUID():
		// Deleted and recreated between two reconciles: two events, in order.
		report(ctx, f.kind, f.del(last))
		report(ctx, f.kind, f.add(obj))
	case last.GetResourceVersion() != obj.GetResourceVersion():
		report(ctx, f.kind, f.update(last, obj))
	}
	return ctrl.Result{}, nil
}

// report logs a rejected event at debug level: the handler already logged it once and
// counted it.
func report(ctx context.Context, kind stores.Kind, err error) {
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("cache rejected the event", "kind", kind, "error", err.Error())
	}
}

// CachedVersion reports the resource version of the object the cache holds under key (the
// catch-up's sweep compares it with the informer's).
func (f *feed[T]) CachedVersion(key types.NamespacedName) (string, bool) {
	last, ok := f.lastSeen(key)
	if !ok {
		return "", false
	}
	return last.GetResourceVersion(), true
}
