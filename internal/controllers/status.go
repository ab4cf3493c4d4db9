package controllers

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeStatus patches the status desired(current) of obj through the status subresource
// when it differs from the current one (desired changes nothing but the status): a merge patch of the difference, with the read
// resourceVersion as an optimistic lock. obj is the object as just read (readForStatus,
// through the manager's cache): the first attempt patches from it, and a conflict (someone
// wrote the object since) is retried with a fresh read. desired may refuse a current object
// with an error, which ends the write (a view that does not match it). It reports whether it
// wrote.
func writeStatus[T client.Object](ctx context.Context, c client.Client, obj T, desired func(T) (T, error)) (bool, error) {
	wrote, reread := false, false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := obj.DeepCopyObject().(T)
		if reread {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
				return err
			}
		}
		reread = true
		next, err := desired(cur)
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(cur, next) {
			return nil
		}
		patch := client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})
		if err := c.Status().Patch(ctx, next, patch); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	return wrote, client.IgnoreNotFound(err)
}

// apiTime converts a time for the API, which keeps whole seconds: comparing a desired
// status with one read back must not differ below a second.
func apiTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t.Truncate(time.Second))
	return &mt
}

// readForStatus reads the API's object under key into obj and the cache's view of it
// (cached: the object the view was derived from). ok is false when the API no longer has it
// or the cache has not seen this incarnation yet (the store notifies the writer when it
// does): a status is written only from a view of the very object it goes on.
func readForStatus[V any](ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object,
	view func() (V, client.Object, bool)) (v V, ok bool, err error) {
	if err := c.Get(ctx, key, obj); err != nil {
		return v, false, client.IgnoreNotFound(err)
	}
	v, cached, found := view()
	if !found || cached == nil || reflect.ValueOf(cached).IsNil() || cached.GetUID() != obj.GetUID() {
		return v, false, nil
	}
	return v, true, nil
}
