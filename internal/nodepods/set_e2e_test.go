package nodepods

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
)

// A handler added before the Set starts is handed, as the initial list, the pods of the
// shard's nodes and the unbound ones, never another node's; the Set and the registration
// report synced only once every shard node's watch listed its pods.
func TestSet_HandlerAddedBeforeStartGetsTheShardsPodsAsInitialAdds(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-initial-a", "initial")
	makeNode(t, "np-initial-b", "initial")
	makeNode(t, "np-initial-other", "initial-other")
	makePods(t, ns, "np-initial-a", "a1", "a2")
	makePods(t, ns, "np-initial-b", "b1")
	makePods(t, ns, "np-initial-other", "other")
	makePods(t, ns, "", "pending")
	// A reflector's first list is served from the API server's watch cache (resource
	// version 0), which may not show a pod created a moment ago yet: that pod would come
	// in the watch, as a later add, as it would to any informer.
	waitCached(t, ns, 5)

	s := newShard(t, "initial")
	rec := &recorder{}
	reg, err := s.set.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	if s.set.HasSynced() || reg.HasSynced() {
		t.Fatal("a Set not started reports synced")
	}
	s.gates.hold("np-initial-b")
	s.startSet()
	eventually(t, "node a's and the unbound pods are handed out", equalKeys(func() []string { return rec.added(ns) }, keys(ns, "a1", "a2", "pending")))
	eventually(t, "node b is watched", func() (bool, string) { return s.set.Watches("np-initial-b"), fmt.Sprint(s.set.Nodes()) })
	if s.set.HasSynced() || reg.HasSynced() {
		t.Errorf("synced (Set %v, registration %v) while node b's pods are not listed yet", s.set.HasSynced(), reg.HasSynced())
	}
	select {
	case <-s.set.HasSyncedChecker().Done():
		t.Error("the Set's DoneChecker is done while node b's pods are not listed yet")
	default:
	}

	s.gates.release("np-initial-b")
	eventually(t, "the registration synced", func() (bool, string) { return reg.HasSynced(), "not synced" })
	if !s.set.HasSynced() {
		t.Error("the registration synced, the Set not")
	}
	select {
	case <-s.set.HasSyncedChecker().Done():
	case <-time.After(time.Minute):
		t.Error("the Set's DoneChecker is not done once it synced")
	}
	if got, want := rec.added(ns), keys(ns, "a1", "a2", "b1", "pending"); !slices.Equal(got, want) {
		t.Errorf("added %v, want %v (each once, no pod of another shard)", got, want)
	}
	for _, e := range rec.addEvents() {
		if strings.HasPrefix(e.key, ns+"/") && !e.initial {
			t.Errorf("%s handed as a later add, want part of the initial list", e.key)
		}
	}
	if got, want := s.set.Nodes(), []string{"np-initial-a", "np-initial-b"}; !slices.Equal(sortedCopy(got), want) {
		t.Errorf("watches the pods of %v, want %v", got, want)
	}
	if s.set.Watches("np-initial-other") {
		t.Error("watches the pods of another shard's node")
	}
}

// A handler added after the Set synced is handed the pods held, as client-go's informers
// do, and may read the Set from its callbacks.
func TestSet_HandlerAddedAfterStartIsHandedThePodsHeld(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-late-a", "late")
	makePods(t, ns, "np-late-a", "a1")
	makePods(t, ns, "", "pending")
	s := startedShard(t, "late")
	eventually(t, "the Set holds the pods", equalKeys(func() []string { return heldIn(s.set, ns) }, keys(ns, "a1", "pending")))

	rec := &recorder{}
	// A handler that reads the informer's store, as listers do.
	reading := &readingHandler{recorder: rec, set: s.set}
	done := make(chan error, 1)
	registered := make(chan toolscache.ResourceEventHandlerRegistration, 1)
	go func() {
		reg, err := s.set.AddEventHandler(reading)
		if err == nil && !reg.HasSynced() {
			err = fmt.Errorf("registration of a synced Set not synced")
		}
		registered <- reg
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("AddEventHandler did not return: a handler reading the Set's store from OnAdd is blocked")
	}
	eventually(t, "the held pods are handed to the new handler", equalKeys(func() []string { return rec.added(ns) }, keys(ns, "a1", "pending")))
	if missed := reading.missed(); len(missed) > 0 {
		t.Errorf("the store did not hold %v when they were handed out", missed)
	}

	// Later events reach it too, until it is removed.
	makePods(t, ns, "np-late-a", "a2")
	eventually(t, "a new pod is handed out", equalKeys(func() []string { return rec.added(ns) }, keys(ns, "a1", "a2", "pending")))
	remaining := &recorder{}
	if _, err := s.set.AddEventHandler(remaining); err != nil {
		t.Fatal(err)
	}
	if err := s.set.RemoveEventHandler(<-registered); err != nil {
		t.Fatal(err)
	}
	makePods(t, ns, "np-late-a", "a3")
	eventually(t, "the remaining handler is handed the pod created after", func() (bool, string) {
		return slices.Contains(remaining.added(ns), ns+"/a3"), fmt.Sprint(remaining.added(ns))
	})
	if got := rec.added(ns); slices.Contains(got, ns+"/a3") {
		t.Errorf("a removed handler was handed %v", got)
	}
}

// readingHandler records, and reads every pod it is handed from the Set's store.
type readingHandler struct {
	*recorder
	set *Set

	mu       sync.Mutex
	notFound []string
}

func (h *readingHandler) OnAdd(obj any, initial bool) {
	h.recorder.OnAdd(obj, initial)
	e := eventOf(obj, initial)
	if _, ok, err := h.set.GetStore().GetByKey(e.key); !ok || err != nil {
		h.mu.Lock()
		h.notFound = append(h.notFound, e.key)
		h.mu.Unlock()
	}
}

func (h *readingHandler) missed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.notFound)
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A Set stops with its context, its sources' informers with it; a DoneChecker of a Set that
// never synced is done then.
func TestSet_StopsWithItsContext(t *testing.T) {
	makeNode(t, "np-stop-a", "stop")
	s := newShard(t, "stop")
	s.gates.hold("np-stop-a")
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.set.Start(ctx) }()
	eventually(t, "node a is watched", func() (bool, string) { return s.set.Watches("np-stop-a"), fmt.Sprint(s.set.Nodes()) })
	checker := s.set.HasSyncedChecker().Done()
	if s.set.IsStopped() || s.set.HasSynced() {
		t.Fatalf("stopped %v, synced %v before its context is done, with node a's list held", s.set.IsStopped(), s.set.HasSynced())
	}
	s.set.mu.RLock()
	sources := slices.Collect(maps.Values(s.set.sources))
	s.set.mu.RUnlock()

	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Start returned %v once stopped", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Start did not return once its context was done")
	}
	if !s.set.IsStopped() {
		t.Error("IsStopped false once Start returned")
	}
	select {
	case <-checker:
	case <-time.After(time.Minute):
		t.Error("the DoneChecker of a stopped Set never done")
	}
	s.gates.release("np-stop-a")
	eventually(t, "every source's watch stopped", func() (bool, string) {
		for _, src := range sources {
			if running(src) {
				return false, fmt.Sprintf("the watch of %q runs", src.name)
			}
		}
		return true, ""
	})
}

// A node's pod watch costs a reflector's goroutines (the one running it, its resync timer,
// the watch's decoder, the HTTP/2 stream: 4), not an informer's (which adds a controller
// loop, a DeltaFIFO and, per handler, two goroutines and a ring buffer: 9 in all): a shard
// runs one per node, and at 250 nodes its stacks went from 13-14 to 7-9 MiB with reflectors
// (BENCHMARKS.md "Shards").
func TestSet_ANodesWatchCostsAReflectorNotAnInformer(t *testing.T) {
	const nodes = 20
	ns := newNamespace(t)
	for i := range nodes {
		name := fmt.Sprintf("np-cost-%d", i)
		makeNode(t, name, "cost")
		makePods(t, ns, name, fmt.Sprintf("p%d", i))
	}
	s := newShard(t, "cost")
	if _, err := s.set.AddEventHandler(&recorder{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the shard's Node informer synced", func() (bool, string) { return s.set.nodes.HasSynced(), "not synced" })
	before := runtime.NumGoroutine()
	s.startSet()
	eventually(t, "the Set synced", func() (bool, string) { return s.set.HasSynced(), "not synced" })
	eventually(t, "every node is watched", func() (bool, string) { return len(s.set.Nodes()) == nodes, fmt.Sprint(s.set.Nodes()) })
	perWatch := float64(runtime.NumGoroutine()-before) / float64(nodes+1)
	t.Logf("%.1f goroutines per watch", perWatch)
	if perWatch > 5 {
		t.Errorf("%.1f goroutines per node's watch, want at most 5 (a reflector and its watch run 4, an informer 9)", perWatch)
	}
}

// running reports whether the source's reflector has not returned yet.
func running(src *source) bool {
	select {
	case <-src.done:
		return false
	default:
		return true
	}
}
