package handler

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
)

// The last-seen objects are what the stores are charged with. A reconciler compares the
// object it reads (or NotFound) with them to turn a level-triggered reconcile into exact
// events: an update is always (last seen, current), a delete always carries the last seen.
// For pods, PodState carries the same (Pod and APIPod).

func lastSeen[K comparable, T any](h *Handler, k *objectKind[K, T], key K) (T, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return k.get(key)
}

// LastSeenNode returns the Node the stores are charged with.
func (h *Handler) LastSeenNode(name string) (*corev1.Node, bool) {
	return lastSeen(h, h.nodeKind, name)
}

// LastSeenNMNode returns the NMNode the stores are charged with.
func (h *Handler) LastSeenNMNode(name string) (*v1alpha1.NMNode, bool) {
	return lastSeen(h, h.nmNodeKind, name)
}

// LastSeenCNR returns the CustomNodeResource the stores are charged with.
func (h *Handler) LastSeenCNR(name string) (*v1alpha1.CustomNodeResource, bool) {
	return lastSeen(h, h.cnrKind, name)
}

// LastSeenPodGroup returns the PodGroup the stores are charged with.
func (h *Handler) LastSeenPodGroup(key types.NamespacedName) (*v1alpha1.PodGroup, bool) {
	return lastSeen(h, h.podGroupKind, key)
}

// LastSeenPDB returns the PodDisruptionBudget the stores are charged with.
func (h *Handler) LastSeenPDB(key types.NamespacedName) (*policyv1.PodDisruptionBudget, bool) {
	return lastSeen(h, h.pdbKind, key)
}

// LastSeenOwner returns the workload owner the stores are charged with.
func (h *Handler) LastSeenOwner(key stores.OwnerKey) (*stores.Owner, bool) {
	return lastSeen(h, h.ownerKind, key)
}

// LastSeenMovement returns the Movement the stores are charged with.
func (h *Handler) LastSeenMovement(name string) (*v1alpha1.Movement, bool) {
	return lastSeen(h, h.movementKind, name)
}

// LastSeenReservation returns the Reservation the stores are charged with.
func (h *Handler) LastSeenReservation(key types.NamespacedName) (*v1alpha1.Reservation, bool) {
	return lastSeen(h, h.rsvKind, key)
}

// LastSeenVersions returns, for one kind, the resource version of every last-seen object by
// key ("namespace/name", or "name" for cluster-scoped kinds, "Type/namespace/name" for
// owners). Pods are those the API reported (assumed pods it has not reported are left out).
func (h *Handler) LastSeenVersions(kind stores.Kind) map[string]string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := map[string]string{}
	switch kind {
	case stores.KindPod:
		h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
			if e.APIPod != nil {
				out[key.String()] = e.APIPod.ResourceVersion
			}
			return true
		})
	case stores.KindNode:
		versions(h.nodeKind, out, func(n *corev1.Node) string { return n.ResourceVersion })
	case stores.KindNMNode:
		versions(h.nmNodeKind, out, func(n *v1alpha1.NMNode) string { return n.ResourceVersion })
	case stores.KindCNR:
		versions(h.cnrKind, out, func(c *v1alpha1.CustomNodeResource) string { return c.ResourceVersion })
	case stores.KindPodGroup:
		versions(h.podGroupKind, out, func(pg *v1alpha1.PodGroup) string { return pg.ResourceVersion })
	case stores.KindPDB:
		versions(h.pdbKind, out, func(p *policyv1.PodDisruptionBudget) string { return p.ResourceVersion })
	case stores.KindOwner:
		versions(h.ownerKind, out, func(o *stores.Owner) string { return o.ResourceVersion })
	case stores.KindMovement:
		versions(h.movementKind, out, func(m *v1alpha1.Movement) string { return m.ResourceVersion })
	case stores.KindReservation:
		versions(h.rsvKind, out, func(r *v1alpha1.Reservation) string { return r.ResourceVersion })
	}
	return out
}

func versions[K comparable, T any](k *objectKind[K, T], out map[string]string, rv func(T) string) {
	for key, obj := range k.seen {
		out[keyString(key)] = rv(obj)
	}
}

// keyString renders a key the way the compare endpoint reports it.
func keyString(key any) string {
	switch k := key.(type) {
	case string:
		return k
	case types.NamespacedName:
		return k.String()
	case stores.OwnerKey:
		return k.String()
	}
	return ""
}
