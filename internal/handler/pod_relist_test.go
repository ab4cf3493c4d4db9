package handler

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestSyncPod_ARelistedPodOfTheSameVersionReplacesTheCachedObject: a relist decodes every
// pod again; the cache must hold the new object (the informer dropped the old one) with
// the same charge, or every pod would be held twice.
func TestSyncPod_ARelistedPodOfTheSameVersionReplacesTheCachedObject(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "4", "8Gi")))
	first := ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.WithUID("u1"), ts.WithResourceVersion("7"))
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	must(t, h.Sync(key, first, true, Current))
	relisted := first.DeepCopy()
	must(t, h.Sync(key, relisted, true, Current))
	st, _ := h.PodState(key)
	if st.APIPod != relisted || st.Pod != relisted {
		t.Fatal("the cache still holds the object of before the relist")
	}
	info, _ := h.NodeInfo("n1")
	if len(info.Pods) != 1 || info.Pods[0] != relisted || info.Requested.MilliCPU != 1000 {
		t.Errorf("node holds %d pods (new object: %v), requested %dm", len(info.Pods), len(info.Pods) == 1 && info.Pods[0] == relisted, info.Requested.MilliCPU)
	}
	// The same object again (a resync, a re-feed) is no event at all.
	updates := eventsTotal(t, string(stores.KindPod), string(stores.OpUpdate), "ok")
	must(t, h.Sync(key, relisted, true, Current))
	if got := eventsTotal(t, string(stores.KindPod), string(stores.OpUpdate), "ok"); got != updates {
		t.Errorf("re-feeding the same object made %v update events", got-updates)
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Errorf("invariants: %v", errs)
	}
}
