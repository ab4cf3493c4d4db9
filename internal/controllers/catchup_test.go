package controllers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// oneInformer serves one client-go informer as the manager's cache would.
type oneInformer struct {
	cache.Informers
	inf toolscache.SharedIndexInformer
}

func (o oneInformer) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return o.inf, nil
}

// copyingStore is an informer's store read as the manager's cache reader reads it: a copy
// per read.
type copyingStore struct{ toolscache.Store }

func (s copyingStore) GetByKey(key string) (any, bool, error) {
	item, ok, err := s.Store.GetByKey(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	return item.(*corev1.Pod).DeepCopy(), true, nil
}

// recorder is a feed's apply that records what it was handed and fails for the keys told.
type recorder struct {
	mu      sync.Mutex
	applied map[types.NamespacedName]client.Object
	failing map[types.NamespacedName]bool
}

func newRecorder() *recorder {
	return &recorder{applied: map[types.NamespacedName]client.Object{}, failing: map[types.NamespacedName]bool{}}
}

// A delete notification records nothing held (it names what goes).
func (r *recorder) apply(_ context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing[key] {
		return 0, errors.New("transient")
	}
	if d == handler.Deleted {
		obj = nil
	}
	r.applied[key] = obj
	return 0, nil
}

func (r *recorder) get(key types.NamespacedName) (client.Object, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	obj, ok := r.applied[key]
	return obj, ok
}

func pod(ns, name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, UID: types.UID(name)}}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCatchUp_DoneOnlyWhenEveryInitialObjectWasApplied runs a feed on a real client-go
// informer: the initial list is applied by the handler as the informer hands it out, and
// the cache has caught up only when the registration synced and the object whose apply
// failed was applied from the queue.
func TestCatchUp_DoneOnlyWhenEveryInitialObjectWasApplied(t *testing.T) {
	src := fcache.NewFakeControllerSource()
	for _, name := range []string{"a", "b", "c"} {
		src.Add(pod("ns", name, "1"))
	}
	inf := toolscache.NewSharedIndexInformer(src, &corev1.Pod{}, 0, toolscache.Indexers{})
	rec := newRecorder()
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	rec.failing[b] = true
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, apply: rec.apply, log: logr.Discard()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.register(ctx, oneInformer{inf: inf}); err != nil {
		t.Fatal(err)
	}
	c := NewCatchUp(logr.Discard(), nil)
	c.track(f)
	go inf.Run(ctx.Done())
	go func() { _ = c.Start(ctx) }()

	eventually(t, "the registration synced", f.reg.HasSynced)
	for _, name := range []string{"a", "c"} {
		if _, ok := rec.get(types.NamespacedName{Namespace: "ns", Name: name}); !ok {
			t.Errorf("ns/%s not applied although the registration synced", name)
		}
	}
	if c.CaughtUp() {
		t.Fatal("caught up while ns/b failed")
	}
	if got := c.Status(); !strings.Contains(got, "1 of 3 initial objects being retried") {
		t.Errorf("status %q", got)
	}

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := f.source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 {
		t.Fatalf("%d keys queued, want ns/b", q.Len())
	}
	req, _ := q.Get()
	if _, err := f.Reconcile(ctx, req); err == nil {
		t.Fatal("a failing apply reconciled without an error")
	}
	rec.mu.Lock()
	rec.failing[b] = false
	rec.mu.Unlock()
	if _, err := f.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("not caught up after every initial object was applied; status %q", c.Status())
	}
	if _, objects := c.Result(); objects != 3 {
		t.Errorf("caught up with %d objects, want 3", objects)
	}
}

// TestFeed_AppliesTheInformersObjects: updates whose version did not move are resyncs and
// change nothing (pods: unless the informer holds a new object, a relist, which goes to the
// queue), deletes apply "gone" even from a tombstone, and a shard's pod deletes go through
// the queue.
func TestFeed_AppliesTheInformersObjects(t *testing.T) {
	rec := newRecorder()
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, apply: rec.apply, log: logr.Discard(),
		changed: podChanged, retrying: map[types.NamespacedName]struct{}{}}
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	p1 := pod("ns", "p", "1")
	f.onAdd(p1, false)
	if got, _ := rec.get(key); got != p1 {
		t.Fatalf("add applied %v, want the informer's own object", got)
	}
	f.onUpdate(p1, p1)
	if got, _ := rec.get(key); got != p1 {
		t.Fatal("a resync was applied")
	}
	relisted := p1.DeepCopy()
	f.onUpdate(p1, relisted)
	if got, _ := rec.get(key); got != p1 {
		t.Fatal("a relisted pod (same version, new object) was applied at once, not through the queue")
	}
	if len(f.pending) != 1 || f.pending[0].NamespacedName != key {
		t.Fatalf("a relisted pod queued %v, want ns/p", f.pending)
	}
	f.pending = nil
	f.changed = nil // the other kinds: only a new version counts
	p2 := pod("ns", "p", "2")
	f.onUpdate(relisted, relisted.DeepCopy())
	if got, _ := rec.get(key); got != p1 || len(f.pending) != 0 {
		t.Fatal("an update of the same version was applied or queued for a kind other than Pod")
	}
	f.onUpdate(relisted, p2)
	if got, _ := rec.get(key); got != p2 {
		t.Fatal("a new version was not applied")
	}
	f.onDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/p", Obj: p2})
	if got, ok := rec.get(key); !ok || got != nil {
		t.Fatalf("a tombstone applied %v (present %v), want gone", got, ok)
	}

	f.queueDeletes = true
	f.onDelete(pod("ns", "q", "3"))
	if len(f.pending) != 1 || f.pending[0].Name != "q" {
		t.Errorf("a shard's delete queued %v, want ns/q", f.pending)
	}
}
