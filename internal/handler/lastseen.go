package handler

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The last-seen objects are what the stores are charged with: the Sync methods derive the
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
// owners). Pods are those the API reported (assumed pods it has not reported are left out).
func (h *Handler) LastSeenVersions(kind stores.Kind) map[string]string {
	switch kind {
	case stores.KindPod:
		// In parts (rangePods): the comparison reads again any difference it finds, so a pod
		// that changed between two parts is not reported.
		var collected []keyVersion[types.NamespacedName]
		h.rangePods(func(key types.NamespacedName, e *podstore.Entry) {
			if e.APIPod != nil {
				collected = append(collected, keyVersion[types.NamespacedName]{key, e.APIPod.ResourceVersion})
			}
		})
		return versionMap(collected)
	case stores.KindNode:
		return versions(h, h.nodeKind, func(n *corev1.Node) string { return n.ResourceVersion })
	case stores.KindNMNode:
		return versions(h, h.nmNodeKind, func(n *v1alpha1.NMNode) string { return n.ResourceVersion })
	case stores.KindCNR:
		return versions(h, h.cnrKind, func(c *v1alpha1.CustomNodeResource) string { return c.ResourceVersion })
	case stores.KindPodGroup:
		return versions(h, h.podGroupKind, func(pg *v1alpha1.PodGroup) string { return pg.ResourceVersion })
	case stores.KindPDB:
		return versions(h, h.pdbKind, func(p *policyv1.PodDisruptionBudget) string { return p.ResourceVersion })
	case stores.KindOwner:
		return versions(h, h.ownerKind, func(o *store.Owner) string { return o.ResourceVersion })
	case stores.KindMovement:
		return versions(h, h.movementKind, func(m *v1alpha1.Movement) string { return m.ResourceVersion })
	case stores.KindReservation:
		return versions(h, h.rsvKind, func(r *v1alpha1.Reservation) string { return r.ResourceVersion })
	}
	if v, ok := h.lastSeenDeviceVersions(kind); ok {
		return v
	}
	return map[string]string{}
}

// keyVersion is a last-seen object's key and resourceVersion.
type keyVersion[K comparable] struct {
	key     K
	version string
}

// versions copies, under the read lock, the key and version of every last-seen object of
// a kind; the strings and the map are built after the lock is released (at 150,000 objects
// that takes tens of milliseconds, during which events would wait).
func versions[K comparable, T any](h *Handler, k *objectKind[K, T], rv func(T) string) map[string]string {
	h.mu.RLock()
	collected := make([]keyVersion[K], 0, len(k.seen))
	for key, obj := range k.seen {
		collected = append(collected, keyVersion[K]{key, rv(obj)})
	}
	h.mu.RUnlock()
	return versionMap(collected)
}

func versionMap[K comparable](collected []keyVersion[K]) map[string]string {
	out := make(map[string]string, len(collected))
	for _, kv := range collected {
		out[keyString(kv.key)] = kv.version
	}
	return out
}

// keyString renders a key the way the compare endpoint reports it.
func keyString(key any) string {
	switch k := key.(type) {
	case string:
		return k
	case types.NamespacedName:
		return k.String()
	case store.OwnerKey:
		return k.String()
	}
	return ""
}
