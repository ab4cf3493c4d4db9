package handler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The last-seen objects are what the stores are charged with: Sync derives the
// edge of an event from them (sync.go); the drift comparison reads their versions. For pods,
// PodState carries the same (Pod and APIPod).

func lastSeen[K comparable, T any](h *Handler, k *objectKind[K, T], key K) (T, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return k.get(key)
}

// LastSeenNode returns the Node the stores are charged with.
func (h *Handler) LastSeenNode(name string) (*corev1.Node, bool) {
	return lastSeen(h, h.nodeKind, name)
}

// LastSeenPodGroup returns the PodGroup the stores are charged with.
func (h *Handler) LastSeenPodGroup(key types.NamespacedName) (*v1alpha1.PodGroup, bool) {
	return lastSeen(h, h.podGroupKind, key)
}

// LastSeenOwner returns the workload owner the stores are charged with.
func (h *Handler) LastSeenOwner(key store.OwnerKey) (*store.Owner, bool) {
	return lastSeen(h, h.ownerKind, key)
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
