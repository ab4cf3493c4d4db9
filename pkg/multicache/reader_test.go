package multicache

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestReader_AnswersInPublicViewsAndSnapshotsTheSame: the Reader and a snapshot answer the
// built-in stores' queries in the public views, and a snapshot keeps the built-in parts
// behind its typed methods (Part is for stores registered out of tree).
func TestReader_AnswersInPublicViewsAndSnapshotsTheSame(t *testing.T) {
	h := newHandler(t)
	r := readerOf(h)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(h.Add(ts.MakePodGroup("ns", "g", 2)))
	must(h.Add(ts.MakePod("ns", "m1", ts.OnNode("n1"), ts.WithLabels(v1alpha1.PodGroupLabel, "g", "app", "web"))))
	must(h.Add(ts.MakePDB("ns", "budget", 1, "app", "web")))
	must(h.Add(ts.MakeReservation("ns", "r", "n1", "1", "1Gi")))

	groupKey := PodGroupKey(store.PodGroupSourceMulticache, "ns", "g")
	rsvKey := types.NamespacedName{Namespace: "ns", Name: "r"}
	g, ok := r.PodGroup(groupKey)
	if !ok || g.Counts.Total() != 1 || g.MinMemberReached {
		t.Errorf("Reader.PodGroup: %+v %v, want 1 member of 2", g, ok)
	}
	if pdbs := r.PDBsForPod(ts.MakePod("ns", "m1", ts.WithLabels("app", "web"))); len(pdbs) != 1 || pdbs[0].Key.Name != "budget" {
		t.Errorf("Reader.PDBsForPod: %+v", pdbs)
	}
	rsv, ok := r.Reservation(rsvKey)
	if !ok || rsv.Node != "n1" || rsv.Resources().MilliCPU != 1000 {
		t.Errorf("Reader.Reservation: %+v %v", rsv, ok)
	}
	if info, ok := r.NodeInfo("n1"); !ok || info.Requested.Pods == 0 {
		t.Errorf("Reader.NodeInfo: %+v %v", info, ok)
	}

	snap := r.NewSnapshot(SnapshotOptions{})
	must(r.UpdateSnapshot(snap))
	if sg, ok := snap.PodGroup(groupKey); !ok || sg.Counts != g.Counts {
		t.Errorf("Snapshot.PodGroup: %+v %v, want the Reader's %+v", sg, ok, g.Counts)
	}
	if sr, ok := snap.Reservation(rsvKey); !ok || sr.Node != rsv.Node || sr.Phase != rsv.Phase {
		t.Errorf("Snapshot.Reservation: %+v %v", sr, ok)
	}
	if _, ok := snap.PDB(types.NamespacedName{Namespace: "ns", Name: "budget"}); !ok {
		t.Error("Snapshot.PDB: missing")
	}
	if infos := snap.NodeInfos(); len(infos) != 1 || snap.Generation() == 0 {
		t.Errorf("Snapshot.NodeInfos: %d infos at generation %d", len(infos), snap.Generation())
	}
	for _, name := range []store.Name{store.NodeStoreName, store.PodStoreName, store.ReservationStoreName, "nosuch"} {
		if p := snap.Part(name); p != nil {
			t.Errorf("Snapshot.Part(%q) = %T: only stores registered out of tree are read by part", name, p)
		}
	}
}

// TestReader_ASubClusterSnapshotHoldsOnlyItsNodes: SnapshotOptions' sub-cluster (a label key
// and value) keeps the nodes labelled so and leaves the others out.
func TestReader_ASubClusterSnapshotHoldsOnlyItsNodes(t *testing.T) {
	h := newHandler(t)
	for name, shard := range map[string]string{"a1": "a", "a2": "a", "b1": "b"} {
		n := ts.MakeNode(name, "4", "8Gi")
		n.Labels = map[string]string{"shard": shard}
		if err := h.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	r := readerOf(h)
	snap := r.NewSnapshot(SnapshotOptions{SubClusterKey: "shard", SubCluster: "a"})
	if err := r.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, info := range snap.NodeInfos() {
		names = append(names, info.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"a1", "a2"}) {
		t.Errorf("sub-cluster shard=a: nodes %v, want [a1 a2]", names)
	}
	if _, ok := snap.NodeInfo("b1"); ok {
		t.Error("a node of another sub-cluster is in the snapshot")
	}
	if whole := r.NewSnapshot(SnapshotOptions{}); r.UpdateSnapshot(whole) != nil || len(whole.NodeInfos()) != 3 {
		t.Errorf("no sub-cluster: %d nodes, want 3", len(whole.NodeInfos()))
	}
}
