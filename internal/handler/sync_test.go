package handler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestSync_DerivesTheEdgeFromWhatTheStoresHold feeds one Node's informer states through
// Sync and checks what the stores are charged with after each: an add, a resync (same
// version) and a notification older than what is held change nothing, a newer version
// updates, another UID replaces, gone deletes.
func TestSync_DerivesTheEdgeFromWhatTheStoresHold(t *testing.T) {
	h, _ := newHandler(t)
	node := func(rv, cpu string, uid types.UID) *corev1.Node {
		n := ts.MakeNode("n1", cpu, "16Gi")
		n.ResourceVersion, n.UID = rv, uid
		return n
	}
	allocatable := func() int64 {
		info, ok := h.NodeInfo("n1")
		if !ok {
			return -1
		}
		return info.Allocatable.MilliCPU
	}
	for _, step := range []struct {
		name    string
		node    *corev1.Node
		wantCPU int64
		wantRV  string
	}{
		{"add", node("10", "4", "a"), 4000, "10"},
		{"resync", node("10", "6", "a"), 4000, "10"},
		{"newer", node("12", "8", "a"), 8000, "12"},
		{"older than held", node("11", "2", "a"), 8000, "12"},
		{"recreated", node("13", "2", "b"), 2000, "13"},
		{"a late notification of the deleted one", node("12", "8", "a"), 2000, "13"},
		{"gone", nil, -1, ""},
		{"gone again", nil, -1, ""},
	} {
		if err := h.Sync(types.NamespacedName{Name: "n1"}, step.node, true, Current); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := allocatable(); got != step.wantCPU {
			t.Errorf("%s: allocatable %dm, want %dm", step.name, got, step.wantCPU)
		}
		last, ok := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n1"})
		if ok != (step.wantRV != "") || ok && last != step.wantRV {
			t.Errorf("%s: last seen %v (present %v), want version %q", step.name, last, ok, step.wantRV)
		}
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// TestSyncPod_ALateNotificationOfADeletedPodDoesNotBringItBack: pod a is replaced under its
// name by b (a repair read, or a shard's other watch, reported b first); a notification of
// a, older than b, comes after. b stays, charged once, and no place is kept for it.
func TestSyncPod_ALateNotificationOfADeletedPodDoesNotBringItBack(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	a := ts.MakePod("ns", "web-0", ts.Requests("1", "1Gi"), ts.OnNode("n1"), ts.WithResourceVersion("10"))
	a.UID = "a"
	b := a.DeepCopy()
	b.UID, b.ResourceVersion = "b", "20"
	late := a.DeepCopy()
	late.ResourceVersion = "15"
	key := types.NamespacedName{Namespace: "ns", Name: "web-0"}
	must(t, h.Sync(key, a, true, Current))
	must(t, h.Sync(key, b, true, Current))
	must(t, h.Sync(key, late, true, Current))
	st, ok := h.PodState(key)
	if !ok || st.Pod.UID != "b" {
		t.Fatalf("after the late notification: %v (present %v), want b", st.Pod.UID, ok)
	}
	if info, _ := h.NodeInfo("n1"); info.Requested.MilliCPU != 1000 {
		t.Errorf("n1 requested %dm, want b charged once", info.Requested.MilliCPU)
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}
