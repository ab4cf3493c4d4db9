package zonestore

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store/storetest"
)

func newStore(t *testing.T) (*Store, *store.Generations) {
	t.Helper()
	h := storetest.NewHandle()
	s, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Store), h.Generations()
}

func node(name, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
}

func pod(name, node, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner, Controller: ptr.To(true)}}
	}
	return p
}

func zonesOf(t *testing.T, s *Store, snap *Snapshot, since int64) map[string]int {
	t.Helper()
	s.UpdateSnapshot(snap, since)
	if errs := s.CheckInvariants(); len(errs) != 0 {
		t.Fatalf("invariants: %v", errs)
	}
	return snap.Zones()
}

func TestStore_PodsFollowTheirNodesZone(t *testing.T) {
	s, gens := newStore(t)
	snap := s.NewSnapshot(store.SnapshotOptions{}).(*Snapshot)
	// A pod before its node: no zone yet.
	s.AddPod(pod("p1", "n1", "web"))
	if got := zonesOf(t, s, snap, 0); !reflect.DeepEqual(got, map[string]int{NoZone: 1}) {
		t.Errorf("before the node: %v", got)
	}
	since := gens.Current()
	s.AddNode(node("n1", "a"))
	s.AddNode(node("n2", "b"))
	s.AddPod(pod("p2", "n1", "web"))
	s.AddPod(pod("p3", "n2", ""))
	s.AddPod(pod("unbound", "", "web"))
	done := pod("done", "n2", "")
	done.Status.Phase = corev1.PodSucceeded
	s.AddPod(done)
	if got := zonesOf(t, s, snap, since); !reflect.DeepEqual(got, map[string]int{"a": 2, "b": 1}) {
		t.Errorf("with nodes: %v (unbound and finished pods do not count)", got)
	}
	s.AddOwner(&store.Owner{Type: "ReplicaSet", Namespace: "ns", Name: "web"})
	since = gens.Current() - 1
	s.UpdateSnapshot(snap, since)
	if got := snap.SingleZone(); len(got) != 1 || got[0].Name != "web" {
		t.Errorf("single-zone workloads %v, want web (2 pods in a)", got)
	}
	since = gens.Current()
	s.UpdateNode(node("n1", "a"), node("n1", "b"))
	s.DeletePod(pod("p3", "n2", ""))
	if got := zonesOf(t, s, snap, since); !reflect.DeepEqual(got, map[string]int{"b": 2}) {
		t.Errorf("after n1 moved to b and p3 went: %v", got)
	}
	since = gens.Current()
	s.DeleteNode(node("n1", "b"))
	if got := zonesOf(t, s, snap, since); !reflect.DeepEqual(got, map[string]int{NoZone: 2}) {
		t.Errorf("after n1 went: %v", got)
	}
	if s.Len() != 2 {
		t.Errorf("Len %d", s.Len())
	}
}
