package reservationstore

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The store's indexes: byNode, byOwner and byRecording here, awaitingNode (nodes.go) and
// byReplacedOwner (owners.go). Each drops a key once nothing is under it.

// indexNode and unindexNode keep byNode: the Reserved and Matched reservations by node.
func (s *Store) indexNode(e *entry) {
	if e.node != "" {
		addTo(s.byNode, e.node, e.key, e)
	}
}

func (s *Store) unindexNode(e *entry) {
	if e.node != "" {
		removeFrom(s.byNode, e.node, e.key)
	}
}

// link and unlink keep byOwner: the Matched reservations under their owner's
// namespace/name, until the owner is deleted.
func (s *Store) link(e *entry) {
	s.byOwner[ownerKey(e.owner)] = append(s.byOwner[ownerKey(e.owner)], e)
}

func (s *Store) unlink(e *entry) { dropEntry(s.byOwner, ownerKey(e.owner), e) }

// setRecording indexes e under the owner its status records (nil: none).
func (s *Store) setRecording(e *entry, ref *v1alpha1.PodReference) {
	if e.recording != nil {
		dropEntry(s.byRecording, ownerKey(e.recording), e)
		e.recording = nil
	}
	if ref != nil {
		r := *ref
		e.recording = &r
		s.byRecording[ownerKey(&r)] = append(s.byRecording[ownerKey(&r)], e)
	}
}

func addTo[K comparable, V any](m map[K]map[types.NamespacedName]V, k K, key types.NamespacedName, v V) {
	if m[k] == nil {
		m[k] = map[types.NamespacedName]V{}
	}
	m[k][key] = v
}

func removeFrom[K comparable, V any](m map[K]map[types.NamespacedName]V, k K, key types.NamespacedName) {
	delete(m[k], key)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// dropEntry takes e out of m's list under key.
func dropEntry(m map[types.NamespacedName][]*entry, key types.NamespacedName, e *entry) {
	if list := slices.DeleteFunc(m[key], func(x *entry) bool { return x == e }); len(list) > 0 {
		m[key] = list
	} else {
		delete(m, key)
	}
}
