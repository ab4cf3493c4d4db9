package drift

import (
	"slices"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"k8s.io/apimachinery/pkg/types"
)

// listedNames are the names of the objects one comparison listed, by owner type ("" for
// other kinds), to find afterwards what the cache holds that the cluster does not. Chunks
// of a fixed size, not a map nor one growing slice: the API server lists in key order
// (namespace/name), so the names usually arrive sorted and are searched as they are (when
// they did not, they are sorted once); 32 bytes a name and nothing copied as they arrive,
// where at 150,000 pods a map of the same keys cost about 230 bytes an object and a slice
// grown by append (1.25x at a time) about 160.
type listedNames struct {
	byType map[string]*sortedNames
}

// namesChunk is how many names a chunk holds (32 KiB).
const namesChunk = 1024

type sortedNames struct {
	chunks [][]types.NamespacedName
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
	n := len(s.chunks)
	if n > 0 {
		last := s.chunks[n-1]
		if stores.CompareKeys(last[len(last)-1], key) > 0 {
			s.unsorted = true
		}
	}
	if n == 0 || len(s.chunks[n-1]) == namesChunk {
		s.chunks = append(s.chunks, make([]types.NamespacedName, 0, namesChunk))
		n++
	}
	s.chunks[n-1] = append(s.chunks[n-1], key)
}

// has reports whether key of ownerType was listed; the first call after the last add sorts
// what arrived out of order.
func (l *listedNames) has(ownerType string, key types.NamespacedName) bool {
	s := l.byType[ownerType]
	if s == nil {
		return false
	}
	if s.unsorted {
		all := slices.Concat(s.chunks...)
		slices.SortFunc(all, stores.CompareKeys)
		s.chunks, s.unsorted = [][]types.NamespacedName{all}, false
	}
	// The first chunk whose last name is not before key holds it, if any does.
	i, _ := slices.BinarySearchFunc(s.chunks, key, func(c []types.NamespacedName, key types.NamespacedName) int {
		return stores.CompareKeys(c[len(c)-1], key)
	})
	if i == len(s.chunks) {
		return false
	}
	_, found := slices.BinarySearchFunc(s.chunks[i], key, stores.CompareKeys)
	return found
}
