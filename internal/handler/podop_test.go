package handler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func TestPodOp_RedispatchesToEveryStoreButTheSkippedOnes(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakePodGroup("ns", "gang", 1)))
	pod := ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.InGroup("gang"))

	h.mu.Lock()
	h.podOp(pod, true, stores.PodGroupStoreName, stores.PodStoreName)
	h.mu.Unlock()
	if info, ok := h.NodeInfo("n1"); !ok || len(info.Pods) != 1 {
		t.Error("the node store did not receive the synthetic add")
	}
	if g, _ := h.PodGroup(types.NamespacedName{Namespace: "ns", Name: "gang"}); g.Counts.Total() != 0 {
		t.Error("a skipped store received the synthetic add")
	}
	if _, ok := h.PodState(store.PodKey(pod)); ok {
		t.Error("the skipped pod store recorded the pod")
	}

	h.mu.Lock()
	h.podOp(pod, false, stores.PodGroupStoreName, stores.PodStoreName)
	h.podOp(pod, true) // nothing skipped: the pod store records it as Added
	h.mu.Unlock()
	if st, ok := h.PodState(store.PodKey(pod)); !ok || st.State != store.PodAdded {
		t.Errorf("pod state after an unskipped synthetic add: %+v %v", st, ok)
	}
	if g, _ := h.PodGroup(types.NamespacedName{Namespace: "ns", Name: "gang"}); g.Counts.Total() != 1 {
		t.Error("the pod group store missed an unskipped synthetic add")
	}
	checkInvariants(t, h)
}

func TestExpiry_AssumedPodExpiresOnlyAfterFinishBindingAndTTL(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	p := ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"))
	must(t, h.AssumePod(p))
	clk.Step(time.Hour)
	if n := h.ExpireAssumedPods(); n != 0 {
		t.Fatalf("a pod whose binding never finished expired")
	}
	must(t, h.FinishBinding(p))
	clk.Step(30 * time.Second)
	before := eventsTotal(t, "Pod", "expire", "ok")
	if n := h.ExpireAssumedPods(); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	if eventsTotal(t, "Pod", "expire", "ok")-before != 1 {
		t.Error("expiry not counted")
	}
	if _, ok := h.PodState(store.PodKey(p)); ok {
		t.Error("expired pod still in the cache")
	}
	if info, _ := h.NodeInfo("n1"); len(info.Pods) != 0 || info.Requested.MilliCPU != 0 {
		t.Error("expired pod still charged to its node")
	}
	checkInvariants(t, h)
}

func TestExpiry_PodTheAPIReportedUnboundReturnsToThatCopy(t *testing.T) {
	h, clk := newHandler(t)
	must(t, h.Add(ts.MakePodGroup("ns", "gang", 1)))
	unbound := ts.MakePod("ns", "p", ts.InGroup("gang"))
	assumed := ts.MakePod("ns", "p", ts.InGroup("gang"), ts.OnNode("n1"))
	must(t, h.Add(unbound))
	must(t, h.AssumePod(assumed))
	must(t, h.FinishBinding(assumed))
	clk.Step(time.Minute)
	h.ExpireAssumedPods()
	st, ok := h.PodState(store.PodKey(unbound))
	if !ok || st.State != store.PodAdded || st.Pod.Spec.NodeName != "" {
		t.Fatalf("after expiry: %+v %v, want the unbound API copy, Added", st, ok)
	}
	g, _ := h.PodGroup(types.NamespacedName{Namespace: "ns", Name: "gang"})
	if g.Counts.Pending != 1 || g.Counts.Scheduled != 0 {
		t.Errorf("group counts %+v, want the member pending again", g.Counts)
	}
	checkInvariants(t, h)
}

func TestApplyOutbox_PodOpsInTheOrderAskedToEveryStoreButTheAskerAndThePodStore(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	p := store.NewPlaceholderPod(ts.MakeReservation("ns", "r", "n1", "1", "1Gi"), "n1")
	placeholders := func() int {
		info, _ := h.NodeInfo("n1")
		return len(info.Placeholders)
	}

	h.mu.Lock()
	var out stores.Outbox
	out.AskPodOp(p, true)
	out.AskPodOp(p, false)
	h.applyOutbox(stores.ReservationStoreName, &out)
	h.mu.Unlock()
	if n := placeholders(); n != 0 {
		t.Fatalf("charged then released, the node holds %d placeholders, want 0: applied out of order", n)
	}

	h.mu.Lock()
	out.AskPodOp(p, true)
	h.applyOutbox(stores.ReservationStoreName, &out)
	h.mu.Unlock()
	if n := placeholders(); n != 1 {
		t.Fatalf("the node holds %d placeholders, want 1", n)
	}
	if _, ok := h.PodState(store.PodKey(p)); ok {
		t.Error("the placeholder reached the pod store")
	}
	checkInvariants(t, h)
}
