package nodepods

import (
	"errors"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// The Set is seen by controller-runtime as the pod informer (cache.Informer), and by the
// catch-up, the drift comparison and the shared lookup as an informer with a store.

// registration is a handler added to the Set.
type registration struct {
	set     *Set
	handler toolscache.ResourceEventHandler
	// replaying is held (write) while the pods held are handed to the new handler, outside
	// the Set's lock (the handler may read the Set); the sources' events wait (read) until
	// then, so they come after.
	replaying sync.RWMutex
}

func (r *registration) onAdd(obj any, initial bool) {
	r.replaying.RLock()
	defer r.replaying.RUnlock()
	r.handler.OnAdd(obj, initial)
}

func (r *registration) onUpdate(oldObj, newObj any) {
	r.replaying.RLock()
	defer r.replaying.RUnlock()
	r.handler.OnUpdate(oldObj, newObj)
}

func (r *registration) onDelete(obj any) {
	r.replaying.RLock()
	defer r.replaying.RUnlock()
	r.handler.OnDelete(obj)
}

// HasSynced implements toolscache.ResourceEventHandlerRegistration: events reach the
// handlers synchronously from the sources' own handlers, so once the Set synced they did.
func (r *registration) HasSynced() bool { return r.set.HasSynced() }

// HasSyncedChecker implements toolscache.ResourceEventHandlerRegistration.
func (r *registration) HasSyncedChecker() toolscache.DoneChecker { return r.set.HasSyncedChecker() }

// AddEventHandler implements cache.Informer. The pods held already are handed to the new
// handler as adds (each once: the index's), before any later event.
func (s *Set) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	r := &registration{set: s, handler: h}
	r.replaying.Lock()
	defer r.replaying.Unlock()
	s.mu.Lock()
	// Copy on write: forward hands out the slice it read under the lock.
	s.handlers = append(slices.Clip(s.handlers), r)
	var held []*corev1.Pod
	for _, src := range s.sources {
		held = s.heldBy(src, held)
	}
	s.mu.Unlock()
	for _, pod := range held {
		h.OnAdd(pod, true)
	}
	return r, nil
}

// AddEventHandlerWithResyncPeriod implements cache.Informer (no resyncs: the feeds need none).
func (s *Set) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandler(h)
}

// AddEventHandlerWithOptions implements cache.Informer.
func (s *Set) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandler(h)
}

// RemoveEventHandler implements cache.Informer.
func (s *Set) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = slices.DeleteFunc(slices.Clone(s.handlers), func(r *registration) bool { return r == handle })
	return nil
}

// AddIndexers implements cache.Informer: the Set indexes pods by node itself; other indexes
// are not supported.
func (s *Set) AddIndexers(toolscache.Indexers) error {
	return errors.New("the shard's pod informers take no indexers (pods are indexed by node already)")
}

// HasSyncedChecker implements cache.Informer.
func (s *Set) HasSyncedChecker() toolscache.DoneChecker { return syncedChecker{s} }

// IsStopped implements cache.Informer.
func (s *Set) IsStopped() bool { return s.stopped.Load() }

// GetStore returns a read-only store over every source (see Store).
func (s *Set) GetStore() toolscache.Store { return store{s} }

// syncedChecker is the Set's HasSynced as a DoneChecker.
type syncedChecker struct{ s *Set }

func (c syncedChecker) Name() string { return "shard pods" }

func (c syncedChecker) Done() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for !c.s.HasSynced() && !c.s.IsStopped() {
			time.Sleep(50 * time.Millisecond)
		}
		close(done)
	}()
	return done
}

// store reads the Set as one toolscache.Store; writes are refused (the sources write).
type store struct{ s *Set }

var errReadOnly = errors.New("the shard's pod store is read-only")

func (st store) Add(any) error                        { return errReadOnly }
func (st store) Update(any) error                     { return errReadOnly }
func (st store) Delete(any) error                     { return errReadOnly }
func (st store) Replace([]any, string) error          { return errReadOnly }
func (st store) Resync() error                        { return nil }
func (st store) Bookmark(string)                      {}
func (st store) LastStoreSyncResourceVersion() string { return "" }

func (st store) List() []any {
	pods := st.s.List()
	out := make([]any, len(pods))
	for i, p := range pods {
		out[i] = p
	}
	return out
}

func (st store) ListKeys() []string {
	// The index, not the stores: a pod being bound may be in two of them.
	st.s.mu.RLock()
	defer st.s.mu.RUnlock()
	keys := make([]string, 0, len(st.s.index))
	for k := range st.s.index {
		keys = append(keys, k)
	}
	return keys
}

func (st store) Get(obj any) (any, bool, error) {
	key, err := toolscache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return st.GetByKey(key)
}

func (st store) GetByKey(key string) (any, bool, error) {
	p, ok := st.s.Get(key)
	if !ok {
		return nil, false, nil
	}
	return p, true, nil
}
