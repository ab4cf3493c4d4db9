package operator

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestVerify_DriftIsCountedAndRepairedByTheNextRun corrupts the cache behind the feeds'
// back (a pod and a node dropped, as a lost event would) and expects the verify loop to find
// the drift against the informers (suspected by one run, confirmed by the next), count it
// once per object and feed the objects again.
func TestVerify_DriftIsCountedAndRepairedByTheNextRun(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.VerifyPeriod = 300 * time.Millisecond })
	ns := newNamespace(t)
	node := withoutUID(ts.MakeNode("verify-node", "8", "16Gi"))
	pod := withoutUID(ts.MakePod(ns, "verify-pod", ts.OnNode("verify-node"), ts.Requests("2", "1Gi")))
	create(t, node, pod)
	key := types.NamespacedName{Namespace: ns, Name: "verify-pod"}
	charged := func() (bool, string) {
		info, ok := op.Cache.NodeInfo("verify-node")
		if !ok {
			return false, "node not cached"
		}
		_, podOK := op.Cache.PodState(key)
		return podOK && info.Node != nil && info.Requested.MilliCPU == 2000,
			fmt.Sprintf("pod cached %v, node source %v, requested %dm", podOK, info.Node != nil, info.Requested.MilliCPU)
	}
	eventually(t, "the pod is charged to its node", charged)
	podDrift, nodeDrift := driftCount(t, stores.KindPod), driftCount(t, stores.KindNode)

	// Lose the pod and the node in the cache only.
	st, _ := op.Cache.PodState(key)
	if err := op.Cache.Delete(st.Pod); err != nil {
		t.Fatal(err)
	}
	lastNode, _ := op.Cache.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "verify-node"})
	if err := op.Cache.Delete(lastNode); err != nil {
		t.Fatal(err)
	}
	if ok, _ := charged(); ok {
		t.Fatal("the corruption did not take")
	}
	eventually(t, "the verify loop re-feeds what the cache lost", charged)
	eventually(t, "the drift is counted once per object", func() (bool, string) {
		p, n := driftCount(t, stores.KindPod)-podDrift, driftCount(t, stores.KindNode)-nodeDrift
		return p == 1 && n == 1, fmt.Sprintf("pod drift %v, node drift %v", p, n)
	})
	// Nothing else drifts, however many runs follow.
	time.Sleep(time.Second)
	if p, n := driftCount(t, stores.KindPod)-podDrift, driftCount(t, stores.KindNode)-nodeDrift; p != 1 || n != 1 {
		t.Errorf("after more runs: pod drift %v, node drift %v, want 1 and 1", p, n)
	}
	deleteNow(t, pod)
}

// driftCount reads multicache_drift_total for a kind.
func driftCount(t *testing.T, kind stores.Kind) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.DriftTotal.WithLabelValues(string(kind)).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
