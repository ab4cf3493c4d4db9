package handler

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// syncFixture is one pod the API reported pending (resource version 1), that a scheduler
// assumed onto its node and finished binding, and that the API then bound there (resource
// version 2): what the pod reconciler reads next.
type syncFixture struct {
	key                      types.NamespacedName
	pending, assumed, apiPod *corev1.Pod
}

func newSyncFixture(t testing.TB, h *Handler, name, node string) syncFixture {
	t.Helper()
	pending := ts.MakePod("ns", name, ts.Requests("100m", "128Mi"), ts.WithLabels("app", "web"),
		ts.CreatedAt(t0.Add(-time.Hour)), ts.WithResourceVersion("1"))
	f := syncFixture{key: store.PodKey(pending), pending: pending}
	must(t, h.Sync(f.key, pending, true, Current))
	f.assumed = pending.DeepCopy()
	f.assumed.Spec.NodeName = node
	must(t, h.AssumePod(f.assumed))
	must(t, h.FinishBinding(f.assumed))
	f.apiPod = f.assumed.DeepCopy()
	ts.ScheduledAt(t0)(f.apiPod)
	f.apiPod.ResourceVersion = "2"
	return f
}

// expectBound checks that the pod is Added on its node and charged there once.
func expectBound(t testing.TB, h *Handler, f syncFixture) {
	t.Helper()
	st, ok := h.PodState(f.key)
	if !ok || st.State != store.PodAdded || st.Pod.Spec.NodeName != f.apiPod.Spec.NodeName || st.Pod.ResourceVersion != "2" {
		t.Errorf("pod %s: state %+v (present %v), want Added on %s at resource version 2", f.key, st, ok, f.apiPod.Spec.NodeName)
		return
	}
	info, _ := h.NodeInfo(f.apiPod.Spec.NodeName)
	n := 0
	for _, p := range info.Pods {
		if store.PodKey(p) == f.key {
			n++
		}
	}
	if n != 1 {
		t.Errorf("pod %s charged %d times on %s, want once", f.key, n, f.apiPod.Spec.NodeName)
	}
}

// TestSyncPod_TheGapBetweenReadingTheStateAndApplyingTheEvent shows the failure mode of
// deciding the event from a state read before the lock is taken again (the pod reconciler
// used to call PodState, then AddPod): a ForgetPod or an expiry in between turns the
// confirmation into an already_added rejection and the bound pod stays uncharged. Sync
// reads and applies under one hold of the lock: after the same forget or expiry it applies
// the binding.
func TestSyncPod_TheGapBetweenReadingTheStateAndApplyingTheEvent(t *testing.T) {
	for name, gap := range map[string]func(*Handler, syncFixture, func(time.Duration)){
		"forget": func(h *Handler, f syncFixture, _ func(time.Duration)) { must(t, h.ForgetPod(f.assumed)) },
		"expiry": func(h *Handler, _ syncFixture, step func(time.Duration)) {
			step(31 * time.Second)
			if n := h.ExpireAssumedPods(); n != 1 {
				t.Fatalf("expired %d pods, want 1", n)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, clk := newHandler(t)
			must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
			f := newSyncFixture(t, h, "p", "n1")

			// The old way: read, (gap), apply what the read state called for.
			st, _ := h.PodState(f.key)
			if st.State != store.PodAssumed {
				t.Fatalf("state %s, want Assumed", st.State)
			}
			gap(h, f, clk.Step)
			err := h.Add(f.apiPod) // the API confirms the assumption, as read
			if !errors.Is(err, store.ErrPodAlreadyAdded) {
				t.Fatalf("AddPod after the gap: %v, want already_added (the failure mode)", err)
			}
			if st, _ := h.PodState(f.key); st.Pod.Spec.NodeName != "" {
				t.Fatalf("the rejected binding changed the cache: %+v", st)
			}

			// Sync reads the state the gap left and applies the binding.
			must(t, h.Sync(f.key, f.apiPod, true, Current))
			expectBound(t, h, f)
			checkInvariants(t, h)
		})
	}
}

// TestSyncPod_EveryBranchOfThePodFeed checks the event Sync derives from the pod's state
// and the API's object, one case per branch.
func TestSyncPod_EveryBranchOfThePodFeed(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	pending := ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.WithResourceVersion("1"))
	bound := ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.OnNode("n1"), ts.WithResourceVersion("2"))
	recreated := ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.WithUID("other"), ts.WithResourceVersion("3"))
	onN1 := pending.DeepCopy()
	onN1.Spec.NodeName = "n1"
	for name, tc := range map[string]struct {
		before  func(h *Handler)
		apiPod  *corev1.Pod
		inScope bool
		state   store.PodState // "" when not cached
		node    string
		uid     string
	}{
		"unknown and not found: nothing":      {nil, nil, true, "", "", ""},
		"unknown: add":                        {nil, pending, true, store.PodAdded, "", "uid-ns-p"},
		"cached and gone: delete":             {func(h *Handler) { must(t, h.Add(bound)) }, nil, true, "", "", ""},
		"cached, filtered out: delete":        {func(h *Handler) { must(t, h.Add(bound)) }, bound, false, "", "", ""},
		"resource version moved: update":      {func(h *Handler) { must(t, h.Add(pending)) }, bound, true, store.PodAdded, "n1", "uid-ns-p"},
		"same resource version: nothing":      {func(h *Handler) { must(t, h.Add(pending)) }, pending, true, store.PodAdded, "", "uid-ns-p"},
		"recreated: delete then add":          {func(h *Handler) { must(t, h.Add(bound)) }, recreated, true, store.PodAdded, "", "other"},
		"assumed, reported bound: confirm":    {func(h *Handler) { must(t, h.Add(pending)); must(t, h.AssumePod(onN1)) }, bound, true, store.PodAdded, "n1", "uid-ns-p"},
		"assumed, reported first: remembered": {func(h *Handler) { must(t, h.AssumePod(onN1)) }, pending, true, store.PodAssumed, "n1", "uid-ns-p"},
		"assumed, filtered out unbound: the assumption stands": {
			func(h *Handler) { must(t, h.AssumePod(onN1)) }, pending, false, store.PodAssumed, "n1", "uid-ns-p"},
	} {
		t.Run(name, func(t *testing.T) {
			h, _ := newHandler(t)
			must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
			if tc.before != nil {
				tc.before(h)
			}
			must(t, h.Sync(key, tc.apiPod, tc.inScope, Current))
			st, ok := h.PodState(key)
			switch {
			case tc.state == "" && ok:
				t.Errorf("state %+v, want the pod gone", st)
			case tc.state != "" && (!ok || st.State != tc.state || st.Pod.Spec.NodeName != tc.node || string(st.Pod.UID) != tc.uid):
				t.Errorf("state %+v (present %v), want %s on %q with UID %s", st, ok, tc.state, tc.node, tc.uid)
			}
			checkInvariants(t, h)
		})
	}
	t.Run("an API pod of another key is invalid", func(t *testing.T) {
		h, _ := newHandler(t)
		err := h.Sync(types.NamespacedName{Namespace: "ns", Name: "q"}, pending, true, Current)
		if !errors.Is(err, store.ErrInvalidObject) || Retryable(err) {
			t.Errorf("error %v (retryable %v), want invalid_object, not retryable", err, Retryable(err))
		}
	})
}

// TestSyncPod_ConcurrentForgetAndExpiryNeverLoseABinding races the pod feed (Sync of
// the bound API pod, as the reconciler calls it once per resource version) with schedulers
// forgetting the same pods and the housekeeping loop expiring them. Whatever wins, every
// bound pod ends Added on its node, charged there once, and Sync never fails. Run with
// -race. The race is run a few rounds: one round catches a read-then-apply feed about half
// the time.
func TestSyncPod_ConcurrentForgetAndExpiryNeverLoseABinding(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprintf("round %d", round), raceSyncWithForgetAndExpiry)
	}
}

func raceSyncWithForgetAndExpiry(t *testing.T) {
	h, clk := newQuietHandler(t)
	const nodes, pods, syncers, forgetters = 4, 400, 4, 3
	for i := range nodes {
		node := fmt.Sprintf("n%d", i)
		must(t, h.Add(ts.MakeNode(node, "64", "256Gi")))
		for j := range 2 {
			r := ts.ReservationCreatedAt(ts.MakeReservation("ns", fmt.Sprintf("r%d-%d", i, j), node, "100m", "128Mi", "app", "web"), t0.Add(-2*time.Hour))
			must(t, h.Add(r))
		}
	}
	fixtures := make([]syncFixture, pods)
	for i := range fixtures {
		fixtures[i] = newSyncFixture(t, h, fmt.Sprintf("p%03d", i), fmt.Sprintf("n%d", i%nodes))
	}

	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, pods)
	for g := range syncers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := g; i < pods; i += syncers {
				if err := h.Sync(fixtures[i].key, fixtures[i].apiPod, true, Current); err != nil {
					errs <- err
				}
			}
		}()
	}
	for g := range forgetters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := pods - 1 - g; i >= 0; i -= forgetters {
				if i%3 != 0 { // leave some to the expiry
					_ = h.ForgetPod(fixtures[i].assumed) // not_assumed once the API won
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		clk.Step(31 * time.Second)
		for range 50 {
			h.ExpireAssumedPods()
		}
	}()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error("Sync:", err)
	}
	for _, f := range fixtures {
		expectBound(t, h, f)
	}
	for i := range nodes {
		info, _ := h.NodeInfo(fmt.Sprintf("n%d", i))
		if want := int64(100 * pods / nodes); info.Requested.MilliCPU-info.Reserved.MilliCPU != want {
			t.Errorf("n%d: pods request %dm, want %dm", i, info.Requested.MilliCPU-info.Reserved.MilliCPU, want)
		}
		if info.Reserved.MilliCPU != 0 {
			t.Errorf("n%d: %dm still reserved, want both reservations consumed by the bound pods", i, info.Reserved.MilliCPU)
		}
	}
	checkInvariants(t, h)
}
