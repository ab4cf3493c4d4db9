package handler

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/yield"
)

// RangeVersions calls fn with the key and resource version of every last-seen object of
// kind: ownerType is a workload owner's type ("" for the other kinds), key.Namespace is ""
// for cluster-scoped kinds. It copies podsPerHold keys and versions per hold of the read
// lock (a few words each: the strings are shared) and calls fn on them after the lock is
// released, so what fn does makes no event wait. Pods are those the API reported (an
// assumed pod it has not reported is left out). Events are applied between two parts: an object changed meanwhile may
// be produced twice or missed (see rangePods), which a comparison reading its differences
// again tolerates. False when the handler keeps no such kind.
func (h *Handler) RangeVersions(kind stores.Kind, fn func(ownerType string, key types.NamespacedName, version string)) bool {
	part := make([]objectVersion, 0, podsPerHold)
	var y yield.Yielder
	released := func() {
		for _, v := range part {
			y.Step()
			fn(v.ownerType, v.key, v.version)
		}
		part = part[:0]
	}
	add := func(ownerType string, key types.NamespacedName, version string) {
		part = append(part, objectVersion{ownerType, key, version})
	}
	if kind == stores.KindPod {
		h.rangePods(podsPerHold, func(key types.NamespacedName, e *podstore.Entry) {
			if e.APIPod != nil {
				add("", key, e.APIPod.ResourceVersion)
			}
		}, released)
		return true
	}
	v, ok := h.kindNamed(kind)
	if ok {
		v.rangeVersions(h, add, released)
	}
	return ok
}

// objectVersion is a last-seen object's key and version as RangeVersions copies them.
type objectVersion struct {
	ownerType string
	key       types.NamespacedName
	version   string
}

// LastSeenVersion returns the resource version of the last-seen object of kind under key
// (ownerType and key as RangeVersions gives them); false when the handler holds none.
func (h *Handler) LastSeenVersion(kind stores.Kind, ownerType string, key types.NamespacedName) (string, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.lastSeenVersion(kind, ownerType, key)
}

// lastSeenVersion is LastSeenVersion with the read lock held.
func (h *Handler) lastSeenVersion(kind stores.Kind, ownerType string, key types.NamespacedName) (string, bool) {
	if kind == stores.KindPod {
		if e, ok := h.pods.Entry(key); ok && e.APIPod != nil && ownerType == "" {
			return e.APIPod.ResourceVersion, true
		}
		return "", false
	}
	if v, ok := h.kindNamed(kind); ok {
		return v.version(ownerType, key)
	}
	return "", false
}
