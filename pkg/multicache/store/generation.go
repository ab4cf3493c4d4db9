package store

// Generations hands out strictly increasing numbers, shared by every store of one handler,
// so that one number says how current a whole snapshot is. Used under the handler lock.
type Generations struct{ last int64 }

// Next returns a new generation, greater than every one before.
func (g *Generations) Next() int64 {
	g.last++
	return g.last
}

// Current returns the latest generation handed out.
func (g *Generations) Current() int64 { return g.last }

// Versioned is a map whose entries remember the generation of their last change. Entries
// are kept in a list from the most to the least recently changed, and deletions in a short
// log, so that a copy taken at generation g is brought up to date by visiting only what
// changed after g: the incremental snapshot of kube-scheduler's cache, for any store.
//
// Not safe for concurrent use: the handler lock guards it.
type Versioned[K comparable, V any] struct {
	gens  *Generations
	items map[K]*versionedItem[K, V]
	head  *versionedItem[K, V]
	// deletions are in ascending generation; those at or below forgotten were dropped, so a
	// copy older than forgotten must be rebuilt.
	deletions []deletion[K]
	forgotten int64
}

type versionedItem[K comparable, V any] struct {
	key        K
	value      V
	generation int64
	prev, next *versionedItem[K, V]
}

type deletion[K comparable] struct {
	key        K
	generation int64
}

// minDeletionLog is how many deletions are always remembered, however small the map.
const minDeletionLog = 256

// NewVersioned returns an empty map drawing generations from gens.
func NewVersioned[K comparable, V any](gens *Generations) *Versioned[K, V] {
	return &Versioned[K, V]{gens: gens, items: map[K]*versionedItem[K, V]{}}
}

// Get returns the value of k.
func (m *Versioned[K, V]) Get(k K) (V, bool) {
	it, ok := m.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	return it.value, true
}

// Len returns the number of entries.
func (m *Versioned[K, V]) Len() int { return len(m.items) }

// Set stores v under k and marks it changed.
func (m *Versioned[K, V]) Set(k K, v V) {
	it, ok := m.items[k]
	if !ok {
		it = &versionedItem[K, V]{key: k}
		m.items[k] = it
	} else {
		m.unlink(it)
	}
	it.value = v
	m.touch(it)
}

// Touch marks k changed (after its value was modified in place) and returns its new
// generation, or 0 when k is absent.
func (m *Versioned[K, V]) Touch(k K) int64 {
	it, ok := m.items[k]
	if !ok {
		return 0
	}
	m.unlink(it)
	m.touch(it)
	return it.generation
}

// Generation returns the generation of k's last change, or 0 when k is absent.
func (m *Versioned[K, V]) Generation(k K) int64 {
	if it, ok := m.items[k]; ok {
		return it.generation
	}
	return 0
}

// Delete removes k and logs the deletion.
func (m *Versioned[K, V]) Delete(k K) {
	it, ok := m.items[k]
	if !ok {
		return
	}
	m.unlink(it)
	delete(m.items, k)
	m.deletions = append(m.deletions, deletion[K]{key: k, generation: m.gens.Next()})
	if limit := max(minDeletionLog, 2*len(m.items)); len(m.deletions) > limit {
		drop := len(m.deletions) / 2
		m.forgotten = m.deletions[drop-1].generation
		m.deletions = append(m.deletions[:0:0], m.deletions[drop:]...)
	}
}

// Range calls fn for every entry, most recently changed first, until fn returns false.
// The map must not change until Range returns.
func (m *Versioned[K, V]) Range(fn func(K, V) bool) {
	for it := m.head; it != nil; it = it.next {
		if !fn(it.key, it.value) {
			return
		}
	}
}

// RangeUnordered calls fn for every entry, in no particular order, until fn returns false.
// It ranges over a Go map and so tolerates changes between two calls of fn (its caller
// letting its lock go meanwhile), with the language's rule: an entry removed before it is
// reached is not produced, an entry added may or may not be.
func (m *Versioned[K, V]) RangeUnordered(fn func(K, V) bool) {
	for k, it := range m.items {
		if !fn(k, it.value) {
			return
		}
	}
}

func (m *Versioned[K, V]) touch(it *versionedItem[K, V]) {
	it.generation = m.gens.Next()
	it.prev = nil
	it.next = m.head
	if m.head != nil {
		m.head.prev = it
	}
	m.head = it
}

func (m *Versioned[K, V]) unlink(it *versionedItem[K, V]) {
	if it.prev != nil {
		it.prev.next = it.next
	} else if m.head == it {
		m.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	it.prev, it.next = nil, nil
}

// SyncResult tells what a Sync did.
type SyncResult struct {
	// Full is set when the copy was rebuilt from scratch (first sync, or deletions older
	// than the deletion log).
	Full bool
	// Changed counts entries copied or removed.
	Changed int
	// SetChanged is set when keys were added to or removed from dst.
	SetChanged bool
}

// Sync brings dst, a copy of m taken at generation since, up to date: entries changed after
// since are copied with clone (or removed from dst when keep rejects them), entries deleted
// after since are removed. clone receives the copy dst holds (the zero S when none) so that
// it may update it in place, keeping pointers that readers of the snapshot hold valid. keep
// may be nil (keep everything).
func Sync[K comparable, V, S any](m *Versioned[K, V], dst map[K]S, since int64, clone func(prev S, v V) S, keep func(V) bool) SyncResult {
	var res SyncResult
	if since == 0 || since < m.forgotten {
		res.Full = true
		res.SetChanged = true
		clear(dst)
		var zero S
		for it := m.head; it != nil; it = it.next {
			if keep == nil || keep(it.value) {
				dst[it.key] = clone(zero, it.value)
				res.Changed++
			}
		}
		return res
	}
	for i := len(m.deletions) - 1; i >= 0 && m.deletions[i].generation > since; i-- {
		k := m.deletions[i].key
		if _, live := m.items[k]; live {
			continue // re-created after the deletion: the loop below copies it
		}
		if _, ok := dst[k]; ok {
			delete(dst, k)
			res.Changed++
			res.SetChanged = true
		}
	}
	for it := m.head; it != nil && it.generation > since; it = it.next {
		prev, had := dst[it.key]
		if keep != nil && !keep(it.value) {
			if had {
				delete(dst, it.key)
				res.Changed++
				res.SetChanged = true
			}
			continue
		}
		dst[it.key] = clone(prev, it.value)
		res.Changed++
		if !had {
			res.SetChanged = true
		}
	}
	return res
}
