package handler

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// The last-seen objects are what the stores are charged with: Sync derives the
// edge of an event from them (sync.go); the drift comparison reads their versions. For pods,
// PodState carries the same (Pod and APIPod).

// LastSeen returns the last-seen object of kind under key (ownerType and key as
// RangeVersions gives them): a pointer of the kind's type, false when the handler holds
// none. For pods, read PodState.
func (h *Handler) LastSeen(kind stores.Kind, ownerType string, key types.NamespacedName) (any, bool) {
	k, ok := h.kindNamed(kind)
	if !ok {
		return nil, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return k.last(ownerType, key)
}

// LastSeenVersions returns, for one kind, the resource version of every last-seen object by
// key ("namespace/name", or "name" for cluster-scoped kinds, "Type/namespace/name" for
// owners), read as RangeVersions reads them. Pods are those the API reported (assumed pods
// it has not reported are left out).
func (h *Handler) LastSeenVersions(kind stores.Kind) map[string]string {
	out := map[string]string{}
	h.RangeVersions(kind, func(ownerType string, key types.NamespacedName, version string) {
		switch {
		case ownerType != "":
			out[ownerType+"/"+key.Namespace+"/"+key.Name] = version
		case key.Namespace != "":
			out[key.Namespace+"/"+key.Name] = version
		default:
			out[key.Name] = version
		}
	})
	return out
}
