package drift

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// listedNames are the names of the objects one comparison listed, by owner type ("" for
// other kinds), to find afterwards what the cache holds that the cluster does not. A
// slice per type, not a map: the API server lists in key order (namespace/name), so the
// names usually arrive sorted and are searched as they are; when they did not, they are
// sorted once. 32 bytes a name and a doubling slice, where a map of the same keys cost
// about 230 bytes an object at 150,000 pods.
type listedNames struct {
	byType map[string]*sortedNames
}

type sortedNames struct {
	names []types.NamespacedName
	// unsorted is set when a name arrived before the one listed just before it.
	unsorted bool
}

func (l *listedNames) add(ownerType string, key types.NamespacedName) {
	if l.byType == nil {
		l.byType = map[string]*sortedNames{}
	}
	s := l.byType[ownerType]
	if s == nil {
		s = &sortedNames{}
		l.byType[ownerType] = s
	}
	if n := len(s.names); n > 0 && keyOrder(s.names[n-1], key) > 0 {
		s.unsorted = true
	}
	s.names = append(s.names, key)
}

// has reports whether key of ownerType was listed; the first call after the last add sorts
// what arrived out of order.
func (l *listedNames) has(ownerType string, key types.NamespacedName) bool {
	s := l.byType[ownerType]
	if s == nil {
		return false
	}
	if s.unsorted {
		slices.SortFunc(s.names, keyOrder)
		s.unsorted = false
	}
	_, found := slices.BinarySearchFunc(s.names, key, keyOrder)
	return found
}

// keyOrder orders names as the API server's keys are: "namespace/name" byte by byte, or
// the name of a cluster-scoped object (a namespace has no "/"), without building either.
func keyOrder(a, b types.NamespacedName) int {
	if a.Namespace == b.Namespace {
		return strings.Compare(a.Name, b.Name)
	}
	n := min(len(a.Namespace), len(b.Namespace))
	if c := strings.Compare(a.Namespace[:n], b.Namespace[:n]); c != 0 {
		return c
	}
	// One namespace is a prefix of the other: the shorter one's "/" meets the longer's
	// next byte.
	if len(a.Namespace) < len(b.Namespace) {
		return cmp.Compare('/', b.Namespace[n])
	}
	return cmp.Compare(a.Namespace[n], '/')
}
