package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recording is a reconciler that records the requests it is given and answers with what
// answer returns for them.
type recording struct {
	got    []reconcile.Request
	answer func(reconcile.Request) (reconcile.Result, error)
}

func (r *recording) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.got = append(r.got, req)
	if r.answer != nil {
		return r.answer(req)
	}
	return reconcile.Result{}, nil
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func req(name string) reconcile.Request { return requestOf(pod(name, "")) }

// registration is a handler registration whose initial list was applied once synced is
// true.
type registration struct {
	toolscache.ResourceEventHandlerRegistration
	synced atomic.Bool
}

func (r *registration) HasSynced() bool { return r.synced.Load() }

func newTestFeedSource(r reconcile.Reconciler) (*feedSource, reconcile.Reconciler) {
	s := &feedSource{name: "pod-feed", r: r, log: func(*reconcile.Request) logr.Logger { return logr.Discard() },
		updates: predicate.ResourceVersionChangedPredicate{}, reg: &registration{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, s.worker()
}

func newQueue(t *testing.T) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, time.Millisecond))
	t.Cleanup(q.ShutDown)
	return q
}

// drain returns what the queue holds (waiting up to a second for what was added after a
// delay).
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request], want int) []reconcile.Request {
	var got []reconcile.Request
	deadline := time.Now().Add(time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		if q.Len() == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	return got
}

// TestFeedSource_AppliesTheInitialListAtOnceAndQueuesTheRest feeds the source what an
// informer delivers before the controller starts it (initial adds, then an update, a
// delete and a new add) and after: the initial adds are reconciled at once, in order, and
// nothing else is; the other events reach the queue once the controller started the source.
func TestFeedSource_AppliesTheInitialListAtOnceAndQueuesTheRest(t *testing.T) {
	r := &recording{}
	s, _ := newTestFeedSource(r)
	s.onAdd(pod("a", "1"), true)
	s.onAdd(pod("b", "1"), true)
	s.onUpdate(pod("a", "1"), pod("a", "2"))
	s.onUpdate(pod("b", "1"), pod("b", "1")) // a resync: filtered out
	s.onDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: pod("b", "1")})
	s.onAdd(pod("c", "3"), false)
	if want := []reconcile.Request{req("a"), req("b")}; !slices.Equal(r.got, want) {
		t.Fatalf("reconciled at once %v, want the initial list %v", r.got, want)
	}
	q := newQueue(t)
	if err := s.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	s.onDelete(pod("c", "3"))
	got := drain(q, 3)
	if want := []reconcile.Request{req("a"), req("b"), req("c")}; !slices.Equal(got, want) {
		t.Errorf("queued %v, want %v (the events after the initial list, deduplicated)", got, want)
	}
	if len(r.got) != 2 {
		t.Errorf("reconciled %v outside the workers", r.got)
	}
}

// TestFeedSource_QueuesWhatFailsAndWhatAsksToBeRequeued: an initial add whose reconcile
// fails, panics or asks to be requeued later reaches the queue; one that succeeds does not.
func TestFeedSource_QueuesWhatFailsAndWhatAsksToBeRequeued(t *testing.T) {
	r := &recording{answer: func(rq reconcile.Request) (reconcile.Result, error) {
		switch rq.Name {
		case "fails":
			return reconcile.Result{}, errors.New("boom")
		case "panics":
			panic("boom")
		case "later":
			return reconcile.Result{RequeueAfter: 10 * time.Millisecond}, nil
		}
		return reconcile.Result{}, nil
	}}
	s, _ := newTestFeedSource(r)
	q := newQueue(t)
	if err := s.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fails", "ok", "panics", "later"} {
		s.onAdd(pod(name, "1"), true)
	}
	got := drain(q, 3)
	slices.SortFunc(got, func(a, b reconcile.Request) int { return strings.Compare(a.Name, b.Name) })
	if want := []reconcile.Request{req("fails"), req("later"), req("panics")}; !slices.Equal(got, want) {
		t.Errorf("queued %v, want %v", got, want)
	}
}

// TestFeedSource_QueuesTheInitialListOnceAWorkerRan: should the workers run before the
// initial list is through, its adds are queued like any event, never reconciled beside them.
func TestFeedSource_QueuesTheInitialListOnceAWorkerRan(t *testing.T) {
	r := &recording{}
	s, worker := newTestFeedSource(r)
	q := newQueue(t)
	if err := s.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	s.reg.(*registration).synced.Store(true)
	if _, err := worker.Reconcile(context.Background(), req("x")); err != nil {
		t.Fatal(err)
	}
	s.onAdd(pod("a", "1"), true)
	if got := drain(q, 1); !slices.Equal(got, []reconcile.Request{req("a")}) {
		t.Errorf("queued %v, want [ns/a]", got)
	}
	if want := []reconcile.Request{req("x")}; !slices.Equal(r.got, want) {
		t.Errorf("reconciled %v, want only the worker's %v", r.got, want)
	}
}

// noKinds is an informer cache that serves no kind.
type noKinds struct{ cache.Informers }

func (noKinds) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return nil, &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "cache.multicache.dev", Kind: "NMNode"}, SearchedVersions: []string{"v1alpha1"}}
}

// TestNewFeedSource_SaysWhatToDoWhenTheKindIsNotServed: a feed of a kind the API server does
// not serve (its CRD not installed) stops the start with the fix in the message.
func TestNewFeedSource_SaysWhatToDoWhenTheKindIsNotServed(t *testing.T) {
	_, _, err := newFeedSource(context.Background(), noKinds{}, "nmnode-feed", &corev1.Pod{}, &recording{},
		func(*reconcile.Request) logr.Logger { return logr.Discard() }, nil)
	if err == nil || !strings.Contains(err.Error(), "nmnode-feed") || !strings.Contains(err.Error(), "install multicache's CRDs") || !meta.IsNoMatchError(err) {
		t.Errorf("newFeedSource() = %v, want the feed, the fix and the NoKindMatchError", err)
	}
}

// TestFeedSource_WorkersWaitForTheInitialListNotTheSyncTimeout: a worker's first reconcile
// waits until the handler applied the initial list (not WaitForSync, which
// controller-runtime bounds by CacheSyncTimeout), and gives up with the reason when it is
// stopped first.
func TestFeedSource_WorkersWaitForTheInitialListNotTheSyncTimeout(t *testing.T) {
	r := &recording{}
	s, worker := newTestFeedSource(r)
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if _, err := worker.Reconcile(stopped, req("x")); err == nil || !strings.Contains(err.Error(), "stopped before the initial list was applied") {
		t.Errorf("a stopped worker: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := worker.Reconcile(context.Background(), req("y"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the worker ran before the initial list was applied (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	s.reg.(*registration).synced.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := []reconcile.Request{req("y")}; !slices.Equal(r.got, want) {
		t.Errorf("reconciled %v, want %v", r.got, want)
	}
}

// TestFeedSource_StoppingCancelsTheDirectReconciles: once the manager stops, an initial add
// is reconciled on a cancelled context, so a read waiting on an informer gives up instead
// of holding the informer past the stop.
func TestFeedSource_StoppingCancelsTheDirectReconciles(t *testing.T) {
	var ctxErr error
	r := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		ctxErr = ctx.Err()
		return reconcile.Result{}, ctxErr
	})
	s, _ := newTestFeedSource(r)
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stopper().Start(mgrCtx) }()
	s.onAdd(pod("a", "1"), true)
	if ctxErr != nil {
		t.Fatalf("before the stop: %v", ctxErr)
	}
	stopMgr()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	s.onAdd(pod("b", "1"), true)
	if !errors.Is(ctxErr, context.Canceled) {
		t.Errorf("after the stop the direct reconcile's context is %v, want cancelled", ctxErr)
	}
	if s.Stopper().NeedLeaderElection() {
		t.Error("the stopper must run on standbys too")
	}
}
