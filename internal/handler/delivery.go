package handler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Delivery says how a feed came by the object it hands the cache (see sync.go).
type Delivery int

const (
	// Current is the object the informer holds under the key (nil: none): a watch's add or
	// update, or a reconcile's read. An object older than the cached one is left alone.
	Current Delivery = iota
	// Deleted is a watch's delete notification, with the object it deletes (its last state
	// or a tombstone's): the cached object goes only when it is that one (same UID).
	Deleted
	// Backwards is an update whose version the informer itself saw go backwards (a relist
	// after an etcd restore without --bump-revision): taken even though it is older.
	Backwards
)

// Sync brings the stores to obj, the object of its kind under key as a feed came by it (d;
// see sync.go): a typed nil when the object is gone. obj is the handler's type of the kind
// (a pod group of another API converted, a workload as *store.Owner); key is the cache's
// key of it (an owner's comes from the object: a gone owner is an Owner naming only its
// type, namespace and name, delivered as Deleted). inScope is for pods (see syncPod).
func (h *Handler) Sync(key types.NamespacedName, obj any, inScope bool, d Delivery) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		return h.syncPod(key, o, inScope, d)
	case *store.Owner:
		if o == nil {
			return h.rejectUnlocked(stores.KindOwner, stores.OpDelete, key.String(), fmt.Errorf("%w: a gone owner is an Owner naming its type, namespace and name, delivered as Deleted", store.ErrInvalidObject))
		}
		return h.ownerKind.sync(h, string(o.Type), types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, o, d)
	}
	if k, ok := h.kindOf(obj); ok {
		return k.sync(h, "", key, obj, d)
	}
	return h.refuseUnknown(stores.OpAdd, obj)
}

// lateDelete counts and logs a delete notification of an object the cache no longer holds
// under its key (another UID is there now). Called with the lock held.
func lateDelete(h *Handler, kind stores.Kind, key string, deleted, cached types.UID) {
	metrics.FeedReordersTotal.WithLabelValues(string(kind), metrics.ReorderLateDelete).Inc()
	h.log.V(1).Info("late delete of an object replaced under its name; nothing changed", "kind", kind, "key", key, "deletedUID", deleted, "cachedUID", cached)
}

// versionsBackwards counts and logs an object taken though its version is older than the
// cached one's. Called with the lock held.
func versionsBackwards(h *Handler, kind stores.Kind, key, cached, taken string) {
	metrics.FeedReordersTotal.WithLabelValues(string(kind), metrics.ReorderVersionBackwards).Inc()
	h.log.Info("resource version went backwards (an etcd restore?); took the API's object", "kind", kind, "key", key, "cachedVersion", cached, "takenVersion", taken)
}
