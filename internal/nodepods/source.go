package nodepods

import (
	"context"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"
)

// A source is one field-selected pod watch: a client-go Reflector filling a sourceStore,
// which hands each change to the Set's handlers as it stores it, as an informer would.
// It is not a SharedIndexInformer because a shard runs one per node: an informer adds a
// DeltaFIFO, a controller loop and, per handler, two goroutines and a 16 KiB ring buffer:
// 9 goroutines per node against a reflector's 4. At 250 nodes a shard's stacks went from
// 13-14 to 7-9 MiB with reflectors, and 4.6 MB of ring buffers left its heap (BENCHMARKS.md
// "Shards"). The reflector and its store are what a watch needs; the Set's handlers are
// quick (the cache applies a pod under its lock), so they run on the reflector's goroutine.

// source is one node's pod watch (unbound: the unbound pods').
type source struct {
	name  string
	store *sourceStore
	// cancel stops the reflector; done is closed once it returned (the tests wait for it).
	cancel context.CancelFunc
	done   chan struct{}
	// stopped is set when the node left the shard: its events are dropped from then.
	stopped atomic.Bool
	// initial: started before the Set synced, its initial list is the Set's.
	initial bool
}

// synced reports whether the source's first list was stored and handed out.
func (src *source) synced() bool { return src.store.synced.Load() }

// sourceStore is the ReflectorStore of a source: it keeps the pods (transformed) and hands
// each change to handler after storing it, with what an informer would hand out: an add
// for a new key (in the initial list during the first Replace), an update for a known key,
// a delete with the last object, and on a relist a DeletedFinalStateUnknown for each key
// the list no longer holds.
type sourceStore struct {
	items     toolscache.Store
	transform toolscache.TransformFunc
	handler   toolscache.ResourceEventHandler
	// synced is set once the first Replace (the initial list) was handed out.
	synced atomic.Bool
}

func newSourceStore(transform toolscache.TransformFunc, handler toolscache.ResourceEventHandler) *sourceStore {
	return &sourceStore{items: toolscache.NewStore(toolscache.MetaNamespaceKeyFunc), transform: transform, handler: handler}
}

// Add implements toolscache.ReflectorStore.
func (st *sourceStore) Add(obj any) error { return st.put(obj, false) }

// Update implements toolscache.ReflectorStore.
func (st *sourceStore) Update(obj any) error { return st.put(obj, false) }

func (st *sourceStore) put(obj any, initial bool) error {
	if st.transform != nil {
		var err error
		if obj, err = st.transform(obj); err != nil {
			return err
		}
	}
	old, exists, err := st.items.Get(obj)
	if err != nil {
		return err
	}
	if err := st.items.Add(obj); err != nil {
		return err
	}
	if exists {
		st.handler.OnUpdate(old, obj)
	} else {
		st.handler.OnAdd(obj, initial)
	}
	return nil
}

// Delete implements toolscache.ReflectorStore.
func (st *sourceStore) Delete(obj any) error {
	if st.transform != nil {
		var err error
		if obj, err = st.transform(obj); err != nil {
			return err
		}
	}
	_, exists, err := st.items.Get(obj)
	if err != nil {
		return err
	}
	if !exists {
		return nil
	}
	if err := st.items.Delete(obj); err != nil {
		return err
	}
	st.handler.OnDelete(obj)
	return nil
}

// Replace implements toolscache.ReflectorStore: the list's objects are stored and handed
// out, then the keys it no longer holds are deleted.
func (st *sourceStore) Replace(list []any, _ string) error {
	initial := !st.synced.Load()
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := toolscache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return err
		}
		listed[key] = struct{}{}
		if err := st.put(obj, initial); err != nil {
			return err
		}
	}
	for _, key := range st.items.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		old, exists, err := st.items.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		if err := st.items.Delete(old); err != nil {
			return err
		}
		st.handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: old})
	}
	st.synced.Store(true)
	return nil
}

// Resync implements toolscache.ReflectorStore (no resyncs: the feeds need none).
func (st *sourceStore) Resync() error { return nil }
