package handler

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
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
		h.rangePodsReleasing(func(key types.NamespacedName, e *podstore.Entry) {
			if e.APIPod != nil {
				add("", key, e.APIPod.ResourceVersion)
			}
		}, released)
		return true
	}
	v, ok := h.versioned(kind)
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
	if v, ok := h.versioned(kind); ok {
		return v.version(ownerType, key)
	}
	return "", false
}

// versionedKind reads the versions of one kind's last-seen objects.
type versionedKind interface {
	// rangeVersions calls fn under the read lock, and released each time it let it go.
	rangeVersions(h *Handler, fn func(ownerType string, key types.NamespacedName, version string), released func())
	// version runs with the read lock held.
	version(ownerType string, key types.NamespacedName) (string, bool)
}

// versioned returns the versions of a kind other than pods.
func (h *Handler) versioned(kind stores.Kind) (versionedKind, bool) {
	switch kind {
	case stores.KindNode:
		return named(h.nodeKind, func(n *corev1.Node) string { return n.ResourceVersion }), true
	case stores.KindNMNode:
		return named(h.nmNodeKind, func(n *v1alpha1.NMNode) string { return n.ResourceVersion }), true
	case stores.KindCNR:
		return named(h.cnrKind, func(c *v1alpha1.CustomNodeResource) string { return c.ResourceVersion }), true
	case stores.KindPodGroup:
		return namespaced(h.podGroupKind, func(pg *v1alpha1.PodGroup) string { return pg.ResourceVersion }), true
	case stores.KindPDB:
		return namespaced(h.pdbKind, func(p *policyv1.PodDisruptionBudget) string { return p.ResourceVersion }), true
	case stores.KindOwner:
		return kindVersions[store.OwnerKey, *store.Owner]{h.ownerKind,
			func(k store.OwnerKey) (string, types.NamespacedName) {
				return string(k.Type), types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
			},
			func(t string, k types.NamespacedName) (store.OwnerKey, bool) {
				return store.OwnerKey{Type: v1alpha1.OwnerType(t), Namespace: k.Namespace, Name: k.Name}, t != ""
			},
			func(o *store.Owner) string { return o.ResourceVersion }}, true
	case stores.KindMovement:
		return named(h.movementKind, func(m *v1alpha1.Movement) string { return m.ResourceVersion }), true
	case stores.KindReservation:
		return namespaced(h.rsvKind, func(r *v1alpha1.Reservation) string { return r.ResourceVersion }), true
	case stores.KindResourceSlice:
		return named(h.sliceKind, func(s *resourcev1.ResourceSlice) string { return s.ResourceVersion }), true
	case stores.KindResourceClaim:
		return namespaced(h.claimKind, func(c *resourcev1.ResourceClaim) string { return c.ResourceVersion }), true
	case stores.KindDeviceClass:
		return named(h.classKind, func(c *resourcev1.DeviceClass) string { return c.ResourceVersion }), true
	}
	return nil, false
}

// kindVersions reads the versions of one objectKind, whose keys ref and key translate.
type kindVersions[K comparable, T any] struct {
	k   *objectKind[K, T]
	ref func(K) (string, types.NamespacedName)
	key func(string, types.NamespacedName) (K, bool)
	rv  func(T) string
}

func named[T any](k *objectKind[string, T], rv func(T) string) kindVersions[string, T] {
	return kindVersions[string, T]{k,
		func(name string) (string, types.NamespacedName) { return "", types.NamespacedName{Name: name} },
		func(t string, k types.NamespacedName) (string, bool) { return k.Name, t == "" && k.Namespace == "" },
		rv}
}

func namespaced[T any](k *objectKind[types.NamespacedName, T], rv func(T) string) kindVersions[types.NamespacedName, T] {
	return kindVersions[types.NamespacedName, T]{k,
		func(key types.NamespacedName) (string, types.NamespacedName) { return "", key },
		func(t string, k types.NamespacedName) (types.NamespacedName, bool) { return k, t == "" },
		rv}
}

// rangeVersions ranges over the last-seen map as rangePodsReleasing does over the pods,
// podsPerHold objects per hold of the read lock.
func (v kindVersions[K, T]) rangeVersions(h *Handler, fn func(string, types.NamespacedName, string), released func()) {
	h.mu.RLock()
	n := 0
	for key, obj := range v.k.seen {
		t, ref := v.ref(key)
		fn(t, ref, v.rv(obj))
		if n++; n%podsPerHold == 0 {
			h.mu.RUnlock()
			released()
			h.partDone()
			h.mu.RLock()
		}
	}
	h.mu.RUnlock()
	released()
}

func (v kindVersions[K, T]) version(ownerType string, key types.NamespacedName) (string, bool) {
	k, ok := v.key(ownerType, key)
	if !ok {
		return "", false
	}
	obj, ok := v.k.seen[k]
	if !ok {
		return "", false
	}
	return v.rv(obj), true
}
