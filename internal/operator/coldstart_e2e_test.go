package operator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// coldStartPods is how many pods the cold-start test puts in the cluster before the operator
// starts: enough that the feeds' queues hold the initial list for a while after the informers
// synced.
const coldStartPods = 3000

// TestColdStart_ReadyOnlyWhenCaughtUpAndNoStatusFromAHalfFedCache starts the operator on a
// cluster that holds thousands of pods and a Running PodGroup past its schedule timeout,
// whose members come last in the informer's list. /readyz (Ready) must not be true before the
// cache holds every pod, and no status may be written that differs from the final one (a
// status writer that ran on the half-fed cache would write Timeout with 0 running and raise a
// Warning event).
func TestColdStart_ReadyOnlyWhenCaughtUpAndNoStatusFromAHalfFedCache(t *testing.T) {
	ns := newNamespace(t)
	node := "cold-node"
	create(t, withoutUID(ts.MakeNode(node, "100000", "100000Gi")))
	createPodsInParallel(t, ns, coldStartPods, func(i int) *corev1.Pod {
		return ts.MakePod(ns, fmt.Sprintf("filler-%05d", i), ts.OnNode(node), ts.Requests("1m", "1Mi"))
	})
	// The members sort after the fillers, so a half-fed cache has not seen them.
	const members = 3
	for i := range members {
		p := withoutUID(ts.MakePod(ns, fmt.Sprintf("zz-member-%d", i), ts.OnNode(node), ts.InGroup("gang"), ts.Requests("1m", "1Mi")))
		create(t, p)
		setPhase(t, p, corev1.PodRunning)
	}
	gang := ts.MakePodGroup(ns, "gang", members)
	gang.Spec.ScheduleTimeoutSeconds = ptr.To[int32](1)
	create(t, gang)
	start := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	gang.Status = v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupRunning, Running: members, ScheduleStartTime: &start}
	if err := env.Client.Status().Update(ctx(), gang); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.DeleteAllOf(ctx(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	})
	final := gang.Status.DeepCopy()

	// Every status the API holds from now on is recorded through a watch.
	watcher, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(ctx(), &v1alpha1.PodGroupList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []v1alpha1.PodGroupStatus
	go func() {
		for ev := range w.ResultChan() {
			if pg, ok := ev.Object.(*v1alpha1.PodGroup); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				mu.Lock()
				seen = append(seen, pg.Status)
				mu.Unlock()
			}
		}
	}()
	defer w.Stop()

	writerRuns := reconcileCount(t, "podgroup-status")
	opts := DefaultOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0", "0"
	opts.LowFreeThreshold, opts.SkipControllerNameValidation = 0, true
	op, err := New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with %v", err)
		}
	}()

	// Poll readiness as tightly as a probe could, and look at the cache the moment it is ready.
	deadline := time.Now().Add(2 * time.Minute)
	for !op.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %s", op.CatchUp.Status())
		}
		time.Sleep(time.Millisecond)
	}
	info, ok := op.Cache.NodeInfo(node)
	if want := coldStartPods + members; !ok || len(info.Pods) != want {
		got := 0
		if ok {
			got = len(info.Pods)
		}
		t.Errorf("ready while the cache holds %d of the node's %d pods", got, want)
	}
	took, objects := op.CatchUp.Result()
	t.Logf("caught up in %v with %d objects", took, objects)
	if objects < coldStartPods+members {
		t.Errorf("caught up with %d objects, want at least %d", objects, coldStartPods+members)
	}

	// Give the status writer time to act on the caught-up cache, then check every status.
	eventually(t, "the status writer has looked at the group", func() (bool, string) {
		return reconcileCount(t, "podgroup-status") > writerRuns, "not reconciled yet"
	})
	time.Sleep(time.Second)
	got := &v1alpha1.PodGroup{}
	if err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "gang"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != final.Phase || got.Status.Running != final.Running {
		t.Errorf("final status %+v, want phase %s running %d", got.Status, final.Phase, final.Running)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, st := range seen {
		if st.Phase != final.Phase || st.Running != final.Running || st.Pending != final.Pending || st.Scheduled != final.Scheduled {
			t.Errorf("status write %d contradicts the final status: phase %q running %d pending %d scheduled %d",
				i, st.Phase, st.Running, st.Pending, st.Scheduled)
		}
	}
	events := &eventsv1.EventList{}
	if err := env.Client.List(ctx(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "Timeout" {
			t.Errorf("a Timeout event was raised for a running group: %s", e.Note)
		}
	}
}

// createPodsInParallel creates n pods made by build, with a few writers at once.
func createPodsInParallel(t *testing.T, ns string, n int, build func(i int) *corev1.Pod) {
	t.Helper()
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				p := build(i)
				p.UID = ""
				if err := env.Client.Create(ctx(), p); err != nil {
					errs <- fmt.Errorf("creating pod %d in %s: %w", i, ns, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
