package store_test

import (
	"maps"
	"testing"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// copyCounter counts the values a Sync copied.
type copyCounter struct{ n int }

func (c *copyCounter) clone(_ int, v int) int {
	c.n++
	return v
}

func TestVersioned_SyncCopiesOnlyWhatChangedSinceTheSnapshot(t *testing.T) {
	gens := &store.Generations{}
	m := store.NewVersioned[string, int](gens)
	for i, k := range []string{"a", "b", "c", "d"} {
		m.Set(k, i)
	}
	snap := map[string]int{}
	var c copyCounter
	res := store.Sync(m, snap, 0, c.clone, nil)
	if !res.Full || c.n != 4 {
		t.Fatalf("first sync: full=%v copies=%d, want a full copy of 4", res.Full, c.n)
	}
	at := gens.Current()

	m.Set("b", 10)
	m.Delete("c")
	m.Set("e", 5)
	c = copyCounter{}
	res = store.Sync(m, snap, at, c.clone, nil)
	if res.Full || c.n != 2 {
		t.Errorf("incremental sync: full=%v copies=%d, want 2 copies (b, e)", res.Full, c.n)
	}
	if want := map[string]int{"a": 0, "b": 10, "d": 3, "e": 5}; !maps.Equal(snap, want) {
		t.Errorf("snapshot %v, want %v", snap, want)
	}
	if !res.SetChanged {
		t.Error("keys were added and removed but SetChanged is false")
	}

	// Nothing changed: nothing is copied.
	at = gens.Current()
	c = copyCounter{}
	if res = store.Sync(m, snap, at, c.clone, nil); c.n != 0 || res.Changed != 0 {
		t.Errorf("sync without changes copied %d", c.n)
	}
}

func TestVersioned_DeletedThenRecreatedKeyIsCopiedNotRemoved(t *testing.T) {
	gens := &store.Generations{}
	m := store.NewVersioned[string, int](gens)
	m.Set("a", 1)
	snap := map[string]int{}
	store.Sync(m, snap, 0, func(_ int, v int) int { return v }, nil)
	at := gens.Current()
	m.Delete("a")
	m.Set("a", 2)
	store.Sync(m, snap, at, func(_ int, v int) int { return v }, nil)
	if snap["a"] != 2 {
		t.Errorf("snapshot %v, want a=2", snap)
	}
}

func TestVersioned_SnapshotOlderThanTheDeletionLogIsRebuilt(t *testing.T) {
	gens := &store.Generations{}
	m := store.NewVersioned[int, int](gens)
	m.Set(-1, -1)
	snap := map[int]int{}
	store.Sync(m, snap, 0, func(_ int, v int) int { return v }, nil)
	at := gens.Current()
	for i := range 2000 { // far more deletions than the log keeps for a map this small
		m.Set(i, i)
		m.Delete(i)
	}
	m.Delete(-1)
	res := store.Sync(m, snap, at, func(_ int, v int) int { return v }, nil)
	if !res.Full || len(snap) != 0 {
		t.Errorf("full=%v len=%d, want a rebuild to an empty snapshot", res.Full, len(snap))
	}
}

func TestVersioned_KeepFilterRemovesEntriesThatStopMatching(t *testing.T) {
	gens := &store.Generations{}
	m := store.NewVersioned[string, int](gens)
	m.Set("a", 1)
	m.Set("b", 2)
	even := func(v int) bool { return v%2 == 0 }
	snap := map[string]int{}
	store.Sync(m, snap, 0, func(_ int, v int) int { return v }, even)
	at := gens.Current()
	m.Set("b", 3) // b stops matching
	m.Set("a", 4) // a starts matching
	store.Sync(m, snap, at, func(_ int, v int) int { return v }, even)
	if want := map[string]int{"a": 4}; !maps.Equal(snap, want) {
		t.Errorf("snapshot %v, want %v", snap, want)
	}
}

// TestVersioned_RangeUnorderedToleratesChangesBetweenSteps: entries set again, deleted
// and added while RangeUnordered runs do not stop it early: every entry neither removed
// before it is reached nor added meanwhile is produced exactly once.
func TestVersioned_RangeUnorderedToleratesChangesBetweenSteps(t *testing.T) {
	m := store.NewVersioned[int, int](&store.Generations{})
	for i := range 100 {
		m.Set(i, i)
	}
	seen := map[int]int{}
	m.RangeUnordered(func(k, _ int) bool {
		seen[k]++
		m.Set(k, k+1)           // moves k to the head of the change list
		m.Set(1000+k, 0)        // added meanwhile: may or may not be produced
		if k%2 == 0 && k < 99 { // an odd key removed, maybe before it is reached
			m.Delete(k + 1)
		}
		return true
	})
	for i := range 100 {
		if seen[i] > 1 {
			t.Errorf("key %d produced %d times", i, seen[i])
		}
		if _, live := m.Get(i); live && seen[i] == 0 && i%2 == 0 {
			t.Errorf("key %d, never removed, not produced", i)
		}
	}
}
