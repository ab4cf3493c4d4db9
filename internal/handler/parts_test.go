package handler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// populated returns a handler holding nodes nodes and pods pods spread over them (callers
// size them past one part of the dump or of the invariant check, as they test).
func populated(t testing.TB, nodes, pods int) (*Handler, []*corev1.Pod) {
	t.Helper()
	h, _ := newQuietHandler(t)
	for i := range nodes {
		must(t, h.Add(ts.MakeNode(fmt.Sprintf("n-%04d", i), "64", "256Gi")))
	}
	held := make([]*corev1.Pod, 0, pods)
	for i := range pods {
		p := ts.MakePod("ns", fmt.Sprintf("p-%05d", i), ts.OnNode(fmt.Sprintf("n-%04d", i%nodes)), ts.Requests("100m", "128Mi"))
		must(t, h.Add(p))
		held = append(held, p)
	}
	return h, held
}

// TestCheckInvariants_InPartsFindsWhatTheWholeCheckFinds breaks the cache behind the
// handler's back in each way that spans the NodeStore and the PodStore, in the last part
// of each kind: the check in parts finds it, and CheckInvariants reports what the whole
// check (checkWhole) finds. The cache spans two parts and a bit of each kind as the check
// cuts them (checkNodesPerHold, checkPodsPerHold).
func TestCheckInvariants_InPartsFindsWhatTheWholeCheckFinds(t *testing.T) {
	nodes, pods := 2*checkNodesPerHold+10, 2*checkPodsPerHold+100
	for _, tc := range []struct {
		name    string
		corrupt func(h *Handler, last *corev1.Pod)
		want    string
		// findings is how many violations CheckInvariants reports: one per thing wrong.
		findings int
	}{
		{"a pod no node charges", func(h *Handler, last *corev1.Pod) { h.nodes.DeletePod(last) },
			"is not charged to node", 1},
		{"a pod charged that the pod store does not know", func(h *Handler, last *corev1.Pod) {
			h.nodes.AddPod(ts.MakePod("ns", "stranger", ts.OnNode(last.Spec.NodeName), ts.Requests("1", "1Gi")))
		}, "pod ns/stranger is charged to node " + fmt.Sprintf("n-%04d", (pods-1)%nodes) + " but unknown to the pod store", 1},
		{"a node holding another copy", func(h *Handler, last *corev1.Pod) {
			h.nodes.DeletePod(last)
			h.nodes.AddPod(last.DeepCopy())
		}, "the node holds another copy than the pod store", 1},
		{"a terminal pod still charged", func(h *Handler, last *corev1.Pod) {
			// The pod store took the ended pod; the node kept the running copy (two findings).
			done := last.DeepCopy()
			done.Status.Phase = corev1.PodSucceeded
			e, _ := h.pods.Entry(store.PodKey(last))
			e.Pod, e.APIPod = done, done
		}, "is charged to node " + fmt.Sprintf("n-%04d", (pods-1)%nodes) + " but should not be", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, held := populated(t, nodes, pods)
			checkInvariants(t, h)
			tc.corrupt(h, held[len(held)-1])
			if errs := h.checkInParts(); len(errs) == 0 {
				t.Fatal("the check in parts found nothing")
			}
			before := readRechecks(t)
			errs := h.CheckInvariants()
			if got := readRechecks(t).minus(before); got != (rechecks{confirmed: 1}) {
				t.Errorf("multicache_invariant_rechecks_total rose by %+v, want confirmed 1", got)
			}
			if !strings.Contains(fmt.Sprint(errs), tc.want) {
				t.Errorf("CheckInvariants() = %v, want a violation containing %q", errs, tc.want)
			}
			if len(errs) != tc.findings {
				t.Errorf("CheckInvariants() = %q, want %d findings", errorSet(errs), tc.findings)
			}
			// Nothing moves meanwhile: the parts find what the whole check finds.
			if parts, whole := errorSet(h.checkInParts()), errorSet(h.checkWhole()); !slices.Equal(parts, whole) {
				t.Errorf("the check in parts found %q, the whole check %q", parts, whole)
			}
		})
	}
}

// TestCheckInvariants_InPartsUnderChurnReportsNothingFalse applies events between the
// parts of each check: every pod moved to the next node (deleted, then created again there),
// so that parts copied before and after the move see it on two nodes, and the pod parts see
// pods come and go. The check in parts suspects something; CheckInvariants reports nothing.
// The cache spans two parts and a bit of each kind as the check cuts them.
func TestCheckInvariants_InPartsUnderChurnReportsNothingFalse(t *testing.T) {
	nodes, pods := 2*checkNodesPerHold+10, 2*checkPodsPerHold+100
	h, held := populated(t, nodes, pods)
	round := 0
	move := func() {
		round++
		for i, old := range held {
			if i%50 != round%50 {
				continue
			}
			var node int
			_, _ = fmt.Sscanf(old.Spec.NodeName, "n-%d", &node)
			moved := ts.MakePod("ns", old.Name, ts.OnNode(fmt.Sprintf("n-%04d", (node+1)%nodes)), ts.Requests("200m", "64Mi"))
			must(t, h.Delete(old))
			must(t, h.Add(moved))
			held[i] = moved
		}
	}
	h.afterPart = move
	before := readRechecks(t)
	for range 10 {
		if errs := h.CheckInvariants(); len(errs) > 0 {
			t.Fatalf("a healthy cache with events between the parts: %v", errs)
		}
	}
	// Every suspicion of the parts was checked again and cleared, and counted so.
	if got := readRechecks(t).minus(before); got.cleared == 0 || got.confirmed != 0 {
		t.Errorf("multicache_invariant_rechecks_total rose by %+v, want some cleared and none confirmed (the test moves nothing between parts?)", got)
	}
	h.afterPart = nil
	checkInvariants(t, h)
}

// rechecks are the values of multicache_invariant_rechecks_total.
type rechecks struct{ cleared, confirmed float64 }

func readRechecks(t *testing.T) rechecks {
	t.Helper()
	return rechecks{
		cleared:   counterValue(t, metrics.InvariantRechecksTotal.WithLabelValues(metrics.RecheckCleared)),
		confirmed: counterValue(t, metrics.InvariantRechecksTotal.WithLabelValues(metrics.RecheckConfirmed)),
	}
}

func (r rechecks) minus(o rechecks) rechecks {
	return rechecks{r.cleared - o.cleared, r.confirmed - o.confirmed}
}

// TestDump_InPartsShowsWhatOneHoldShows: at rest, the dump copied in parts equals the
// stores' dumps copied under one hold of the lock; under events from another goroutine it
// completes and holds every node (run with -race).
func TestDump_InPartsShowsWhatOneHoldShows(t *testing.T) {
	nodes, pods := 2*nodesPerHold+10, 2*podsPerHold+100
	h, held := populated(t, nodes, pods)
	h.mu.RLock()
	wantNodes, wantPods := h.nodes.Dump(), h.pods.Dump()
	h.mu.RUnlock()
	d := dumpParts(t, h)
	for _, c := range []struct {
		what      string
		got, want any
	}{{"nodes", d["nodes"], wantNodes}, {"pods", d["pods"], wantPods}} {
		got, _ := json.Marshal(c.got)
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s in parts differ from one hold (%d against %d bytes)", c.what, len(got), len(want))
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, old := range held[:2000] {
			moved := ts.MakePod("ns", old.Name, ts.OnNode(fmt.Sprintf("n-%04d", (i+1)%nodes)), ts.Requests("200m", "64Mi"))
			must(t, h.Delete(old))
			must(t, h.Add(moved))
		}
	}()
	for range 5 {
		if got := len(dumpPart[map[string]nodestore.NodeDump](t, h, "nodes")); got != nodes {
			t.Errorf("a dump under events holds %d nodes, want %d", got, nodes)
		}
	}
	<-done
}

// TestLastSeenVersions_InPartsWithEventsBetween: pods moved between the parts of the read
// (deleted, then added again on another node) are all listed once, at their last version,
// and a pod untouched keeps its version.
func TestLastSeenVersions_InPartsWithEventsBetween(t *testing.T) {
	nodes, pods := 2*nodesPerHold+10, 2*podsPerHold+100
	h, held := populated(t, nodes, pods)
	moved := 0
	h.afterPart = func() {
		for i := moved; i < moved+50 && i < len(held)/2; i++ {
			p := ts.MakePod("ns", held[i].Name, ts.OnNode(fmt.Sprintf("n-%04d", (i+1)%nodes)), ts.Requests("200m", "64Mi"))
			p.ResourceVersion = "moved"
			must(t, h.Delete(held[i]))
			must(t, h.Add(p))
		}
		moved += 50
	}
	got := h.LastSeenVersions(stores.KindPod)
	h.afterPart = nil
	want := h.LastSeenVersions(stores.KindPod)
	if len(want) != pods {
		t.Fatalf("at rest %d pods, want %d", len(want), pods)
	}
	for key, rv := range got {
		if want[key] != rv && rv != held[0].ResourceVersion {
			t.Errorf("pod %s listed at %q, neither its last version %q nor its first", key, rv, want[key])
		}
	}
	if len(got) < pods-moved || len(got) > pods {
		t.Errorf("listed %d pods during the moves, want between %d and %d", len(got), pods-moved, pods)
	}
}
