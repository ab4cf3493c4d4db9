package handler

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Sync is how the feeds hand the cache what an informer holds: the current object under a
// key, or a typed nil when it is gone. The handler derives the edge from what the
// stores are charged with (the last-seen object), under the one lock, so that nothing
// moves between deciding and applying:
//
//	gone, seen            -> Delete(last seen)
//	present, not seen     -> Add(current)
//	another UID           -> Delete(last seen), then Add(current)  (deleted and recreated)
//	newer resourceVersion -> Update(last seen, current)
//	same or older version -> nothing (a resync, or a notification older than a repair)
//
// A delete always carries the object the stores were charged with, even when the informer
// handed over only a tombstone. "Older" uses apimachinery's CompareResourceVersion
// (resource versions of one resource are comparable integers since Kubernetes 1.35); a
// version it cannot compare counts as newer, as before that rule existed.
//
// Two deliveries of a feed differ from "the current object" (Delivery):
//
//   - a watch's delete notification names the object it deletes: the cache drops what it
//     holds under the key only when it is that object (same UID). The informer's store runs
//     ahead of its notifications, so a reconcile may have applied the object recreated under
//     the name before the old one's delete is delivered: that late delete changes nothing.
//   - an object whose version went backwards in the informer itself (a relist after an etcd
//     restore without --bump-revision: every version is "older" than the cache's) is taken
//     as it is; skipping it would leave the cache on the lost versions for good.
//
// Both are counted in multicache_feed_reorders_total.

// syncObject derives and applies, in one hold of the lock, the edge between the last-seen
// object of key and obj (the zero T: gone) as delivered (d).
func syncObject[K comparable, T comparable](h *Handler, k *objectKind[K, T], key K, obj T, d Delivery) error {
	var zero T
	rv := k.rv
	h.mu.Lock()
	defer h.mu.Unlock()
	last, seen := k.get(key)
	if d == Deleted {
		if !seen {
			return nil
		}
		if obj == zero { // a typed nil names no UID: whatever is cached goes
			return objectEventLocked(h, k, stores.OpDelete, last, zero)
		}
		if uid, cached := k.uidOf(obj), k.uidOf(last); uid != "" && cached != "" && uid != cached {
			lateDelete(h, k.kind, fmt.Sprint(key), uid, k.uidOf(last))
			return nil
		}
		return objectEventLocked(h, k, stores.OpDelete, last, zero)
	}
	switch {
	case obj == zero && seen:
		return objectEventLocked(h, k, stores.OpDelete, last, zero)
	case obj == zero:
		return nil
	case !seen:
		return objectEventLocked(h, k, stores.OpAdd, zero, obj)
	case d != Backwards && older(rv(obj), rv(last)):
		// Before the UID: a notification of a deleted object, older than the object that
		// replaced it under the same name, must not bring the deleted one back.
		return nil
	case k.uidOf(last) != k.uidOf(obj):
		if d == Backwards && older(rv(obj), rv(last)) {
			versionsBackwards(h, k.kind, fmt.Sprint(key), rv(last), rv(obj))
		}
		if err := objectEventLocked(h, k, stores.OpDelete, last, zero); err != nil {
			return err
		}
		return objectEventLocked(h, k, stores.OpAdd, zero, obj)
	case d == Backwards && older(rv(obj), rv(last)):
		versionsBackwards(h, k.kind, fmt.Sprint(key), rv(last), rv(obj))
		return objectEventLocked(h, k, stores.OpUpdate, last, obj)
	case newer(rv(obj), rv(last)):
		return objectEventLocked(h, k, stores.OpUpdate, last, obj)
	}
	return nil
}

// newer reports whether resource version a is newer than b: different, and not older by
// CompareResourceVersion (a version it cannot compare counts as newer).
func newer(a, b string) bool {
	if a == b {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err != nil || c > 0
}

// older reports whether resource version a is known to be older than b.
func older(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c < 0
}
