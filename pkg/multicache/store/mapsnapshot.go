package store

// MapSnapshot is a store's snapshot that is one map of copies, filled by Sync. Stores whose
// snapshot needs nothing more use it as their Snapshot type.
type MapSnapshot[K comparable, V any] struct {
	store Name
	items map[K]V
}

// NewMapSnapshot returns an empty snapshot of a store.
func NewMapSnapshot[K comparable, V any](store Name) *MapSnapshot[K, V] {
	return &MapSnapshot[K, V]{store: store, items: map[K]V{}}
}

// StoreName implements Snapshot.
func (s *MapSnapshot[K, V]) StoreName() Name { return s.store }

// Get returns the copy of one object.
func (s *MapSnapshot[K, V]) Get(key K) (V, bool) {
	v, ok := s.items[key]
	return v, ok
}

// Len returns the number of objects.
func (s *MapSnapshot[K, V]) Len() int { return len(s.items) }

// Items returns the map, for the store's UpdateSnapshot to Sync into. Readers must not
// modify it.
func (s *MapSnapshot[K, V]) Items() map[K]V { return s.items }
