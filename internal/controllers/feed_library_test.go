package controllers

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// These tests drive the real client-go and controller-runtime informers to pin down what the
// pod feed relies on of them (see podChanged and feed.register).

// updates records the updates an informer hands its handler.
type updates struct {
	mu    sync.Mutex
	pairs [][2]*corev1.Pod
}

func (u *updates) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.pairs = append(u.pairs, [2]*corev1.Pod{oldObj.(*corev1.Pod), newObj.(*corev1.Pod)})
	}}
}

func (u *updates) get() [][2]*corev1.Pod {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][2]*corev1.Pod(nil), u.pairs...)
}

// podListWatch serves pod ns/a at version 5, decoded anew (a new object) on every list, and
// on every watch that asks for the initial events (client-go's watch-list, which it prefers
// to a list when the WatchListClient gate is on); its watches are handed to watches.
func podListWatch(watches chan<- *watch.FakeWatcher) *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: []corev1.Pod{*pod("ns", "a", "5")}}, nil
		},
		WatchFunc: func(opts metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(10, false)
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				w.Add(pod("ns", "a", "5"))
				w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: "10", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
				}})
			}
			watches <- w
			return w, nil
		},
	}
}

// TestInformer_ARelistHandsANewObjectOfTheSameVersion: when its watch expires, client-go's
// informer lists again and hands each object over as an update from the object it held to
// the one just decoded: a new pointer of the same version, which podChanged passes so that
// the cache lets the old object go. This fails if a relist stops handing over the new
// objects, or hands the old one again.
func TestInformer_ARelistHandsANewObjectOfTheSameVersion(t *testing.T) {
	watches := make(chan *watch.FakeWatcher, 10)
	inf := toolscache.NewSharedIndexInformer(podListWatch(watches), &corev1.Pod{}, 0, toolscache.Indexers{})
	var got updates
	if _, err := inf.AddEventHandler(got.handler()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go inf.Run(ctx.Done())
	eventually(t, "the informer's sync", inf.HasSynced)
	first := <-watches
	held, ok, _ := inf.GetStore().GetByKey("ns/a")
	if !ok {
		t.Fatal("the informer holds no ns/a after its list")
	}
	// The watch expires (410 Gone): the informer lists again.
	first.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired})
	eventually(t, "the relist's update", func() bool { return len(got.get()) > 0 })
	u := got.get()[0]
	if u[0] != held.(*corev1.Pod) || u[1] == u[0] || u[1].ResourceVersion != u[0].ResourceVersion {
		t.Fatalf("a relist handed over %p (version %s) after %p (version %s); the informer held %p",
			u[1], u[1].ResourceVersion, u[0], u[0].ResourceVersion, held)
	}
	if now, _, _ := inf.GetStore().GetByKey("ns/a"); now != u[1] {
		t.Fatal("after a relist the informer holds another object than the one it handed over")
	}
	if !podChanged(u[0], u[1]) {
		t.Fatal("podChanged drops a relist's new object")
	}
}

// TestInformer_AResyncHandsTheSameObject: a resync hands each object over as an update from
// itself to itself, which podChanged drops. This fails if a resync starts handing over
// another object (podChanged would then pass every resync: 150,000 reconciles each period).
func TestInformer_AResyncHandsTheSameObject(t *testing.T) {
	watches := make(chan *watch.FakeWatcher, 10)
	inf := toolscache.NewSharedIndexInformer(podListWatch(watches), &corev1.Pod{}, time.Second, toolscache.Indexers{})
	var got updates
	if _, err := inf.AddEventHandlerWithResyncPeriod(got.handler(), time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go inf.Run(ctx.Done())
	<-watches
	eventually(t, "two resyncs", func() bool { return len(got.get()) >= 2 })
	for _, u := range got.get() {
		if u[0] != u[1] {
			t.Fatalf("a resync handed over %p after %p", u[1], u[0])
		}
		if podChanged(u[0], u[1]) {
			t.Fatal("podChanged passes a resync")
		}
	}
}

// TestFeed_ControllerRuntimeInformersExposeTheirStore: the informer controller-runtime's
// cache hands out has client-go's GetStore, which the feed reads (feed.current) so that the
// cache holds the informer's own objects; without it register refuses the informer (the
// manager's reader would hand the cache copies to hold beside the informer's). This fails if
// controller-runtime's informer stops exposing its store.
func TestFeed_ControllerRuntimeInformersExposeTheirStore(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	// Never started: nothing is asked of the API server.
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, log: logr.Discard()}
	if err := f.register(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	defer f.cancel()
	if f.store == nil {
		t.Fatal("register accepted the informer and kept no store")
	}
}

// storelessInformer is an informer with no GetStore.
type storelessInformer struct{ cache.Informer }

// TestFeed_RegisterRefusesAnInformerWithoutItsStore: an informer that does not expose its
// store is refused with an error naming the feed, and the feed keeps nothing of it.
func TestFeed_RegisterRefusesAnInformerWithoutItsStore(t *testing.T) {
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, log: logr.Discard()}
	err := f.register(t.Context(), storelessInformers{})
	if err == nil || !strings.Contains(err.Error(), "pod-feed") || !strings.Contains(err.Error(), "does not expose its store") {
		t.Fatalf("register: %v, want the feed named and the missing store said", err)
	}
	if f.store != nil || f.reg != nil {
		t.Error("a refused informer left a store or a registration behind")
	}
}

// storelessInformers hands out a storelessInformer.
type storelessInformers struct{ cache.Informers }

func (storelessInformers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return storelessInformer{}, nil
}

// orderRecorder is a reconciler that records the keys it is handed, holding the first until
// release is closed.
type orderRecorder struct {
	release chan struct{}
	mu      sync.Mutex
	keys    []string
}

func (r *orderRecorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.keys = append(r.keys, req.Name)
	first := len(r.keys) == 1
	r.mu.Unlock()
	if first {
		<-r.release
	}
	return reconcile.Result{}, nil
}

func (r *orderRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys)
}

// TestFeed_ControllerRuntimeQueuesALowPriorityKeyLast: with controller-runtime's default
// options, a key the feed queues at low priority (enqueueLow: a relist's swaps) is handed to
// the reconciler after one queued later at normal priority, so that the swaps wait behind
// the changes a relist brings (BenchmarkFeed_AChangeBehindARelistOf30000Pods). The feed
// asserts the queue is a priorityqueue.PriorityQueue; this fails if controller-runtime's
// default queue stops honouring the priority.
func TestFeed_ControllerRuntimeQueuesALowPriorityKeyLast(t *testing.T) {
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, log: logr.Discard()}
	rec := &orderRecorder{release: make(chan struct{})}
	c, err := controller.NewTypedUnmanaged("pod-feed", controller.TypedOptions[reconcile.Request]{
		Reconciler: rec, SkipNameValidation: ptr.To(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(f.source()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	f.enqueue(types.NamespacedName{Namespace: "ns", Name: "busy"}, 0)
	eventually(t, "the first reconcile", func() bool { return len(rec.get()) == 1 })
	f.enqueueLow(types.NamespacedName{Namespace: "ns", Name: "swap"})
	f.enqueue(types.NamespacedName{Namespace: "ns", Name: "change"}, 0)
	close(rec.release)
	eventually(t, "the reconciles", func() bool { return len(rec.get()) == 3 })
	if got := rec.get(); !slices.Equal(got, []string{"busy", "change", "swap"}) {
		t.Fatalf("reconciled %v: the low-priority key was not last", got)
	}
}
