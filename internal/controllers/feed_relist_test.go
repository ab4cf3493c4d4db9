package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// TestFeed_ARelistsSwapsWaitBehindTheChangesItBrings: after a relist the informer hands the
// pod feed every pod again (same version, new object) and then what changed; the swaps go
// to the queue at low priority, so the change of a pod is applied at once, and a failed
// apply queued after the swaps is retried before them. Reconciled, a swap applies the
// informer's current object.
func TestFeed_ARelistsSwapsWaitBehindTheChangesItBrings(t *testing.T) {
	informer := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	rec := newRecorder()
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, store: copyingStore{informer}, apply: rec.apply,
		log: logr.Discard(), changed: podChanged, retrying: map[types.NamespacedName]struct{}{}}
	f.ctx = context.Background()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := priorityqueue.New[reconcile.Request]("pod-feed")
	defer q.ShutDown()
	if err := f.source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	c := types.NamespacedName{Namespace: "ns", Name: "c"}
	a1, b1 := pod("ns", "a", "1"), pod("ns", "b", "1")
	for _, p := range []*corev1.Pod{a1, b1} {
		mustStore(t, informer.Add(p))
		f.onAdd(p, true)
	}

	// The relist: both pods again, unchanged.
	a1again, b1again := a1.DeepCopy(), b1.DeepCopy()
	for _, u := range [][2]*corev1.Pod{{a1, a1again}, {b1, b1again}} {
		mustStore(t, informer.Update(u[1]))
		f.onUpdate(u[0], u[1])
	}
	if got, _ := rec.get(a); got != a1 {
		t.Fatal("the relist's copy of ns/a was applied in the informer's delivery")
	}
	// Then a change the watch brings after the relist: applied at once.
	b2 := pod("ns", "b", "2")
	mustStore(t, informer.Update(b2))
	f.onUpdate(b1again, b2)
	if got, _ := rec.get(b); got != b2 {
		t.Fatalf("the change of ns/b after the relist was not applied at once (applied %v)", got)
	}
	// A failed apply, queued after the swaps, is retried first.
	rec.failing[c] = true
	c1 := pod("ns", "c", "1")
	mustStore(t, informer.Add(c1))
	f.onAdd(c1, false)
	rec.failing[c] = false

	var order []types.NamespacedName
	var priorities []int
	for range 3 {
		req, prio, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		order, priorities = append(order, req.NamespacedName), append(priorities, prio)
		if _, err := f.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		q.Done(req)
	}
	if order[0] != c || priorities[0] != 0 {
		t.Errorf("first out of the queue: %v at priority %d, want the retry of ns/c at 0 (order %v)", order[0], priorities[0], order)
	}
	for i := 1; i < 3; i++ {
		if priorities[i] != crhandler.LowPriority {
			t.Errorf("%v came out at priority %d, want the relist's swap at %d", order[i], priorities[i], crhandler.LowPriority)
		}
	}
	if q.Len() != 0 {
		t.Errorf("%d keys left in the queue", q.Len())
	}
	for key, want := range map[types.NamespacedName]string{a: "1", b: "2", c: "1"} {
		got, ok := rec.get(key)
		if !ok || got.GetResourceVersion() != want {
			t.Errorf("%v: applied %v, want version %s", key, got, want)
		}
	}
}

func mustStore(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFeed_ADeleteBetweenAReconcilesReadAndItsApplyStaysDeleted: the queue's path reads the
// informer's store, then applies; the informer's delivery deletes the key in between (the
// store first, then the handler). The reconcile must not leave the deleted object in the
// cache: it reads the key again after its apply and applies what the informer holds then.
func TestFeed_ADeleteBetweenAReconcilesReadAndItsApplyStaysDeleted(t *testing.T) {
	for _, viaStore := range []bool{true, false} {
		informer := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
		rec := newRecorder()
		f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, store: copyingStore{informer},
			log: logr.Discard(), changed: podChanged, retrying: map[types.NamespacedName]struct{}{}}
		if viaStore {
			f.store = informer
		}
		f.ctx = context.Background()
		a := types.NamespacedName{Namespace: "ns", Name: "a"}
		a1 := pod("ns", "a", "1")
		mustStore(t, informer.Add(a1))
		inReconcile, deleted := false, false
		f.apply = func(ctx context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error) {
			if inReconcile && obj != nil && !deleted {
				// The delivery, between the reconcile's read and its apply: the store
				// forgets the pod, the handler applies the delete.
				deleted = true
				mustStore(t, informer.Delete(a1))
				f.onDelete(a1)
			}
			return rec.apply(ctx, key, obj, d)
		}
		f.onAdd(a1, true)
		inReconcile = true
		if _, err := f.Reconcile(context.Background(), reconcile.Request{NamespacedName: a}); err != nil {
			t.Fatal(err)
		}
		if got, _ := rec.get(a); got != nil {
			t.Errorf("via the informer's store %v: the cache holds %v after the delete, want nothing", viaStore, got)
		}
	}
}
