package handler

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// expectSnapshotMatchesLive compares every node info of a snapshot with the live cache.
func expectSnapshotMatchesLive(t *testing.T, h *Handler, snap *Snapshot) {
	t.Helper()
	live := h.NodeInfos()
	if snap.Nodes().Len() != len(live) {
		t.Fatalf("snapshot has %d nodes, cache %d", snap.Nodes().Len(), len(live))
	}
	for _, want := range live {
		got, ok := snap.Nodes().Get(want.Name)
		if !ok || got.Generation != want.Generation || !got.Requested.Equal(want.Requested) || len(got.Pods) != len(want.Pods) {
			t.Errorf("node %s: snapshot %+v, cache %+v", want.Name, got, want)
		}
	}
}

func TestSnapshot_IncrementalUpdateEqualsTheCacheAtOneGeneration(t *testing.T) {
	h, _ := newHandler(t)
	for i := range 10 {
		must(t, h.Add(ts.MakeNode(fmt.Sprintf("n%d", i), "8", "16Gi")))
	}
	must(t, h.Add(ts.MakePodGroup("ns", "gang", 2)))
	must(t, h.Add(ts.MakeReservation("ns", "r", "n0", "1", "1Gi", "app", "web")))
	snap := h.NewSnapshot(store.SnapshotOptions{})
	must(t, h.UpdateSnapshot(snap))
	expectSnapshotMatchesLive(t, h, snap)
	untouched, _ := snap.Nodes().Get("n9")
	untouchedGen := untouched.Generation

	p := ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.InGroup("gang"))
	must(t, h.AssumePod(p))
	must(t, h.Delete(ts.MakeNode("n5", "8", "16Gi")))
	must(t, h.UpdateSnapshot(snap))
	expectSnapshotMatchesLive(t, h, snap)
	if n9, _ := snap.Nodes().Get("n9"); n9 != untouched || n9.Generation != untouchedGen {
		t.Error("an unchanged node was replaced or copied")
	}
	if st, _ := snap.Pods().Get(store.PodKey(p)); st.State != store.PodAssumed {
		t.Errorf("snapshot holds the assumed pod as %q, want %q", st.State, store.PodAssumed)
	}
	if g, _ := snap.PodGroups().Get(types.NamespacedName{Namespace: "ns", Name: "gang"}); g.Counts.Scheduled != 1 {
		t.Errorf("snapshot group counts %+v, want 1 scheduled", g.Counts)
	}
	if v, ok := snap.Reservations().Get(rsvKey); !ok || v.Phase != "Reserved" {
		t.Errorf("snapshot reservation %+v", v)
	}
	if snap.Generation() != h.Config().Generations().Current() {
		t.Errorf("snapshot at generation %d, cache at %d", snap.Generation(), h.Config().Generations().Current())
	}

	// The snapshot does not follow the cache until it is updated again.
	must(t, h.ForgetPod(p))
	if st, _ := snap.Pods().Get(store.PodKey(p)); st.State != store.PodAssumed {
		t.Errorf("the snapshot changed without UpdateSnapshot: the pod is %q", st.State)
	}
}

func TestSnapshot_SubClusterRestrictsNodeInfos(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("a1", "8", "16Gi", "shard", "a")))
	must(t, h.Add(ts.MakeNode("b1", "8", "16Gi", "shard", "b")))
	snap := h.NewSnapshot(store.SnapshotOptions{NodeFilter: func(i *store.NodeInfo) bool { return i.Labels()["shard"] == "a" }})
	must(t, h.UpdateSnapshot(snap))
	if _, ok := snap.Nodes().Get("b1"); ok || snap.Nodes().Len() != 1 {
		t.Errorf("sub-cluster snapshot holds %d nodes", snap.Nodes().Len())
	}
}

func TestSnapshot_DisabledStoresHaveNoPart(t *testing.T) {
	h, _ := newHandler(t, func(c *stores.Config) { c.EnabledStores = []stores.Name{} })
	snap := h.NewSnapshot(store.SnapshotOptions{})
	must(t, h.UpdateSnapshot(snap))
	if snap.Nodes() == nil || snap.Pods() == nil {
		t.Fatal("required stores missing from the snapshot")
	}
	if snap.PodGroups() != nil || snap.PDBs() != nil || snap.Movements() != nil || snap.Reservations() != nil {
		t.Error("disabled stores have a snapshot part")
	}
}

func TestSnapshot_ReadingTakesNoHandlerLock(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	snap := h.NewSnapshot(store.SnapshotOptions{})
	must(t, h.UpdateSnapshot(snap))
	h.mu.Lock() // a writer holds the lock for as long as it likes
	defer h.mu.Unlock()
	done := make(chan int)
	go func() {
		n := 0
		for _, info := range snap.Nodes().List() {
			n += len(info.Name)
		}
		done <- n
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a snapshot waited for the handler lock")
	}
}
