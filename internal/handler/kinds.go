package handler

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// objectKind is the handler's side of one kind other than Pod: the last-seen object of every
// key (what the stores are charged with, but for an assumed claim) and the subscribed
// stores in fan-out order.
type objectKind[K comparable, T comparable] struct {
	kind  stores.Kind
	keyOf func(T) K
	uidOf func(T) types.UID
	rv    func(T) string
	// ref and fromRef translate a key to and from how Sync and RangeVersions name it: a
	// workload owner's type ("" for the other kinds) and a namespaced name (no namespace for
	// a cluster-scoped kind).
	ref     func(K) (string, types.NamespacedName)
	fromRef func(ownerType string, key types.NamespacedName) (K, bool)
	seen    map[K]T
	subs    []subscriber[T]
	// dispatch, when set, fans an accepted event out instead of fanOut: the claims, whose
	// stores are charged with a scheduler's assumption while it stands (claims.go), not
	// with the last-seen object.
	dispatch func(op stores.Op, key K, charged, newObj T, timed bool)
}

// apiObject is an API kind's object type (a pointer).
type apiObject interface {
	client.Object
	comparable
}

// clusterScoped is the objectKind of a cluster-scoped API kind, keyed by name.
func clusterScoped[T apiObject](kind stores.Kind) *objectKind[string, T] {
	return &objectKind[string, T]{kind: kind, seen: map[string]T{},
		keyOf: func(obj T) string { return obj.GetName() },
		uidOf: func(obj T) types.UID { return obj.GetUID() },
		rv:    func(obj T) string { return obj.GetResourceVersion() },
		ref:   func(name string) (string, types.NamespacedName) { return "", types.NamespacedName{Name: name} },
		fromRef: func(t string, key types.NamespacedName) (string, bool) {
			return key.Name, t == "" && key.Namespace == ""
		},
	}
}

// namespaced is the objectKind of a namespaced API kind, keyed by namespace and name.
func namespaced[T apiObject](kind stores.Kind) *objectKind[types.NamespacedName, T] {
	return &objectKind[types.NamespacedName, T]{kind: kind, seen: map[types.NamespacedName]T{},
		keyOf: func(obj T) types.NamespacedName {
			return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		},
		uidOf: func(obj T) types.UID { return obj.GetUID() },
		rv:    func(obj T) string { return obj.GetResourceVersion() },
		ref:   func(key types.NamespacedName) (string, types.NamespacedName) { return "", key },
		fromRef: func(t string, key types.NamespacedName) (types.NamespacedName, bool) {
			return key, t == ""
		},
	}
}

// owners is the objectKind of the workload owners, keyed by type, namespace and name.
func owners() *objectKind[store.OwnerKey, *store.Owner] {
	return &objectKind[store.OwnerKey, *store.Owner]{kind: stores.KindOwner, seen: map[store.OwnerKey]*store.Owner{},
		keyOf: (*store.Owner).Key,
		uidOf: func(o *store.Owner) types.UID { return o.UID },
		rv:    func(o *store.Owner) string { return o.ResourceVersion },
		ref: func(k store.OwnerKey) (string, types.NamespacedName) {
			return string(k.Type), types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
		},
		fromRef: func(t string, key types.NamespacedName) (store.OwnerKey, bool) {
			return store.OwnerKey{Type: v1alpha1.OwnerType(t), Namespace: key.Namespace, Name: key.Name}, t != ""
		},
	}
}

// kind is an objectKind whatever its key and type: the handler's table of kinds (h.kinds),
// which Sync and the edge form reach by the object's type and RangeVersions by name.
type kind interface {
	name() stores.Kind
	objectType() reflect.Type
	// watched reports whether an enabled store handles the kind.
	watched() bool
	// event validates and applies an edge (objects of the kind's type, or nil).
	event(h *Handler, op stores.Op, oldObj, newObj any) error
	// sync brings the stores to obj (of the kind's type) under the key fromRef translates.
	sync(h *Handler, ownerType string, key types.NamespacedName, obj any, d Delivery) error
	// rangeVersions calls fn under the read lock, and released each time it let it go.
	rangeVersions(h *Handler, fn func(ownerType string, key types.NamespacedName, version string), released func())
	// last and version run with the read lock held.
	last(ownerType string, key types.NamespacedName) (any, bool)
	version(ownerType string, key types.NamespacedName) (string, bool)
}

func (k *objectKind[K, T]) name() stores.Kind        { return k.kind }
func (k *objectKind[K, T]) objectType() reflect.Type { return reflect.TypeFor[T]() }
func (k *objectKind[K, T]) watched() bool            { return len(k.subs) > 0 }

func (k *objectKind[K, T]) event(h *Handler, op stores.Op, oldObj, newObj any) error {
	o, okOld := oldObj.(T)
	n, okNew := newObj.(T)
	if (oldObj != nil && !okOld) || (newObj != nil && !okNew) {
		return h.rejectUnlocked(k.kind, op, "<mismatch>", fmt.Errorf("%w: an update from a %T to a %T", store.ErrInvalidObject, oldObj, newObj))
	}
	return objectEvent(h, k, op, o, n)
}

func (k *objectKind[K, T]) sync(h *Handler, ownerType string, key types.NamespacedName, obj any, d Delivery) error {
	cacheKey, ok := k.fromRef(ownerType, key)
	if !ok {
		op := stores.OpAdd
		if obj.(T) == *new(T) {
			op = stores.OpDelete
		}
		return h.rejectUnlocked(k.kind, op, key.String(), fmt.Errorf("%w: (%q, %s) is not the key of a %s (only an owner's names a type, and a cluster-scoped kind's has no namespace)", store.ErrInvalidObject, ownerType, key, k.kind))
	}
	return syncObject(h, k, cacheKey, obj.(T), d)
}

// rangeVersions ranges over the last-seen map as rangePods does over the pods,
// podsPerHold objects per hold of the read lock.
func (k *objectKind[K, T]) rangeVersions(h *Handler, fn func(string, types.NamespacedName, string), released func()) {
	h.mu.RLock()
	n := 0
	for key, obj := range k.seen {
		t, ref := k.ref(key)
		fn(t, ref, k.rv(obj))
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

func (k *objectKind[K, T]) last(ownerType string, key types.NamespacedName) (any, bool) {
	cacheKey, ok := k.fromRef(ownerType, key)
	if !ok {
		return nil, false
	}
	obj, ok := k.seen[cacheKey]
	if !ok {
		return nil, false
	}
	return obj, true
}

func (k *objectKind[K, T]) version(ownerType string, key types.NamespacedName) (string, bool) {
	obj, ok := k.last(ownerType, key)
	if !ok {
		return "", false
	}
	return k.rv(obj.(T)), true
}

// kindOf returns the kind of an object by its Go type (a typed nil has one), false for a
// type the handler keeps no kind of (pods included: they have the state machine).
func (h *Handler) kindOf(obj any) (kind, bool) {
	k, ok := h.kindsByType[reflect.TypeOf(obj)]
	return k, ok
}

// kindNamed returns the kind of that name other than pods.
func (h *Handler) kindNamed(name stores.Kind) (kind, bool) {
	for _, k := range h.kinds {
		if k.name() == name {
			return k, true
		}
	}
	return nil, false
}
