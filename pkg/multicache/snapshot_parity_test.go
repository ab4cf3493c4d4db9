package multicache

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	forked "k8s.io/apimachinery/third_party/forked/golang/reflect"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// queries are the read queries Reader and Snapshot share: the compiler checks that both
// have every one.
type queries interface {
	NodeInfo(name string) (*store.NodeInfo, bool)
	NodeInfos() []*store.NodeInfo
	PodState(key types.NamespacedName) (store.PodStatus, bool)
	PodsOnNode(node string) []store.PodStatus
	PodGroup(key types.NamespacedName) (store.PodGroup, bool)
	PodGroupsForPod(pod *corev1.Pod) []store.PodGroup
	PDBsForPod(pod *corev1.Pod) []store.PDB
	PDBsForOwner(owner store.OwnerKey) []store.PDB
	Movement(name string) (store.Movement, bool)
	MovementSuggestions(owner store.OwnerKey) map[string]int64
	Reservation(key types.NamespacedName) (store.Reservation, bool)
	ReservationsOnNode(node string) []store.Reservation
	MatchableReservations(pod *corev1.Pod) []store.Reservation
	RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources
	NodeDevices(node string) (store.NodeDevices, bool)
}

var (
	_ queries = Reader(nil)
	_ queries = (*Snapshot)(nil)
)

// TestSnapshot_HasEveryReaderQuery: every method of Reader but the snapshot's own
// (NewSnapshot, UpdateSnapshot) and KeepsPlaceFor (a decision the live cache makes when a
// pod goes, from owners a snapshot does not hold) is a method of *Snapshot with the same
// signature.
func TestSnapshot_HasEveryReaderQuery(t *testing.T) {
	rt, st := reflect.TypeFor[Reader](), reflect.TypeFor[*Snapshot]()
	for i := range rt.NumMethod() {
		m := rt.Method(i)
		if m.Name == "NewSnapshot" || m.Name == "UpdateSnapshot" || m.Name == "KeepsPlaceFor" {
			continue
		}
		sm, ok := st.MethodByName(m.Name)
		if !ok {
			t.Errorf("Snapshot lacks Reader.%s", m.Name)
			continue
		}
		// sm.Type has the receiver first.
		if sm.Type.NumIn() != m.Type.NumIn()+1 || sm.Type.NumOut() != m.Type.NumOut() {
			t.Errorf("Snapshot.%s is %v, Reader.%s is %v", m.Name, sm.Type, m.Name, m.Type)
			continue
		}
		for j := range m.Type.NumIn() {
			if sm.Type.In(j+1) != m.Type.In(j) {
				t.Errorf("Snapshot.%s is %v, Reader.%s is %v", m.Name, sm.Type, m.Name, m.Type)
			}
		}
		for j := range m.Type.NumOut() {
			if sm.Type.Out(j) != m.Type.Out(j) {
				t.Errorf("Snapshot.%s is %v, Reader.%s is %v", m.Name, sm.Type, m.Name, m.Type)
			}
		}
	}
}

// parityProbes are the arguments the parity tests ask every query with.
var (
	probeNodes  = []string{"n1", "n2", "n3", "nosuch"}
	probePods   = []*corev1.Pod{web("m1", "n1"), gangMember("g1", "n2"), gangMember("g2", ""), cachePod("c1", ""), cachePod("c2", "n1"), ts.MakePod("ns", "stranger")}
	probeKeys   = []types.NamespacedName{{Namespace: "ns", Name: "m1"}, {Namespace: "ns", Name: "g1"}, {Namespace: "ns", Name: "g2"}, {Namespace: "ns", Name: "c1"}, {Namespace: "ns", Name: "c2"}, {Namespace: "ns", Name: "nosuch"}}
	probeOwner  = store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}
	probeOwners = []store.OwnerKey{probeOwner, {Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "nosuch"}}
	probeGroup  = PodGroupKey(store.PodGroupSourceMulticache, "ns", "gang")
	probeRsvs   = []types.NamespacedName{{Namespace: "ns", Name: "r1"}, {Namespace: "ns", Name: "r2"}}
)

func web(name, node string) *corev1.Pod {
	return ts.MakePod("ns", name, ts.OnNode(node), ts.WithUID("uid-"+name), ts.WithLabels("app", "web"), ts.OwnedBy("ReplicaSet", "web", "uid-ReplicaSet-ns-web"))
}

func gangMember(name, node string) *corev1.Pod {
	return ts.MakePod("ns", name, ts.OnNode(node), ts.WithUID("uid-"+name), ts.InGroup("gang"))
}

func cachePod(name, node string) *corev1.Pod {
	return ts.MakePod("ns", name, ts.OnNode(node), ts.WithUID("uid-"+name), ts.WithLabels("app", "cache"))
}

// answers asks q every query with every probe.
func answers(q queries) map[string]any {
	infos := q.NodeInfos() // a snapshot's are in no particular order
	slices.SortFunc(infos, func(a, b *store.NodeInfo) int { return strings.Compare(a.Name, b.Name) })
	out := map[string]any{"NodeInfos": infos}
	for _, n := range probeNodes {
		info, ok := q.NodeInfo(n)
		out["NodeInfo/"+n] = []any{info, ok}
		out["PodsOnNode/"+n] = q.PodsOnNode(n)
		out["ReservationsOnNode/"+n] = q.ReservationsOnNode(n)
		d, ok := q.NodeDevices(n)
		out["NodeDevices/"+n] = []any{d, ok}
	}
	for _, p := range probePods {
		gs := q.PodGroupsForPod(p)
		for i := range gs {
			gs[i] = sortedMembers(gs[i])
		}
		out["PodGroupsForPod/"+p.Name] = gs
		out["PDBsForPod/"+p.Name] = q.PDBsForPod(p)
		out["MatchableReservations/"+p.Name] = q.MatchableReservations(p)
		out["RoomHeldFrom/"+p.Name] = q.RoomHeldFrom(p)
	}
	for _, k := range probeKeys {
		st, ok := q.PodState(k)
		out["PodState/"+k.String()] = []any{st, ok}
	}
	for _, o := range probeOwners {
		out["PDBsForOwner/"+o.String()] = q.PDBsForOwner(o)
		out["MovementSuggestions/"+o.String()] = q.MovementSuggestions(o)
	}
	g, ok := q.PodGroup(probeGroup)
	out["PodGroup"] = []any{sortedMembers(g), ok}
	m, ok := q.Movement("move")
	out["Movement"] = []any{m, ok}
	for _, k := range probeRsvs {
		r, ok := q.Reservation(k)
		out["Reservation/"+k.String()] = []any{r, ok}
	}
	return out
}

// sortedMembers sorts a group's members, which come in no particular order.
func sortedMembers(g store.PodGroup) store.PodGroup {
	g.Members = slices.Clone(g.Members)
	slices.SortFunc(g.Members, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return g
}

// sameAnswers reports every query where got differs from want (nil and empty slices and
// maps are equal).
func sameAnswers(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if g := got[k]; !sameValue.DeepEqual(g, w) {
			t.Errorf("%s: %s = %s, want %s", what, k, show(g), show(w))
		}
	}
}

// sameValue is reflect.DeepEqual with nil and empty slices and maps equal, and times and
// quantities compared by value.
var sameValue = forked.EqualitiesOrDie(
	func(a, b time.Time) bool { return a.Equal(b) },
	func(a, b metav1.Time) bool { return a.Equal(&b) },
	func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 },
)

func show(v any) string { return fmt.Sprintf("%+v", v) }

// TestSnapshot_AnswersAsTheReaderAtItsGeneration: a snapshot updated at some moment
// answers every query as the Reader does at that moment; events applied after do not show
// in it until the next UpdateSnapshot, which then answers as the Reader again.
func TestSnapshot_AnswersAsTheReaderAtItsGeneration(t *testing.T) {
	h := newHandler(t)
	r, a := readerOf(h), assumer{h}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Add(ts.MakeNode("n1", "8", "16Gi")))
	must(h.Add(ts.MakeNode("n2", "8", "16Gi")))
	must(h.Add(ts.MakeNode("n3", "8", "16Gi")))
	must(h.Add(&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "n1-gpus", UID: "s1", ResourceVersion: "1"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To("n1"),
			Pool:    resourcev1.ResourcePool{Name: "n1", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu0"}, {Name: "gpu1"}}}}))
	must(h.Add(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web")))
	must(h.Add(ts.MakePDB("ns", "budget", 1, "app", "web")))
	must(h.Add(ts.MakePDB("ns", "cache-budget", 0, "app", "cache")))
	must(h.Add(ts.MakePodGroup("ns", "gang", 2)))
	must(h.Add(web("m1", "n1")))
	must(h.Add(gangMember("g1", "n2")))
	must(h.Add(gangMember("g2", "")))
	must(a.AssumePod(gangMember("g2", "n3")))
	must(h.Add(cachePod("c1", "")))
	must(h.Add(ts.MakeReservation("ns", "r1", "n1", "1", "1Gi", "app", "cache")))
	must(h.Add(ts.MakeReservation("ns", "r2", "n2", "1", "1Gi", "app", "other")))
	must(h.Add(ts.MakeMovement("move", v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}, "n2", 2, "n3", 1)))

	snap := r.NewSnapshot(SnapshotOptions{})
	must(r.UpdateSnapshot(snap))
	first := answers(r)
	sameAnswers(t, "first snapshot", answers(snap), first)

	// What the fixture must show, lest the parity be that of empty answers.
	if ps := snap.PodsOnNode("n3"); len(ps) != 1 || ps[0].State != store.PodAssumed || ps[0].Pod.Name != "g2" {
		t.Errorf("PodsOnNode(n3) = %+v, want g2 assumed", ps)
	}
	if ps := snap.PodsOnNode("n1"); len(ps) != 1 || ps[0].State != store.PodAdded || ps[0].Pod.Name != "m1" {
		t.Errorf("PodsOnNode(n1) = %+v, want m1 added", ps)
	}
	if gs := snap.PodGroupsForPod(gangMember("g1", "n2")); len(gs) != 1 || gs[0].Key != probeGroup || gs[0].MinMember() != 2 || gs[0].Counts.Active() != 2 {
		t.Errorf("PodGroupsForPod(g1) = %+v, want the gang, minMember 2, 2 active", gs)
	}
	if pdbs := snap.PDBsForPod(web("m1", "n1")); len(pdbs) != 1 || pdbs[0].Key.Name != "budget" {
		t.Errorf("PDBsForPod(m1) = %+v, want budget", pdbs)
	}
	if pdbs := snap.PDBsForPod(cachePod("c1", "")); len(pdbs) != 1 || pdbs[0].Key.Name != "cache-budget" {
		t.Errorf("PDBsForPod(c1) = %+v, want cache-budget (by selector)", pdbs)
	}
	if rs := snap.MatchableReservations(cachePod("c1", "")); len(rs) != 1 || rs[0].Key.Name != "r1" {
		t.Errorf("MatchableReservations(c1) = %+v, want r1", rs)
	}
	if held := snap.RoomHeldFrom(cachePod("c1", "")); held["n2"].Pods != 1 || held["n1"].Pods != 0 {
		t.Errorf("RoomHeldFrom(c1) = %+v, want r2's room on n2 only", held)
	}
	if d, ok := snap.NodeDevices("n1"); !ok || d.Total != 2 {
		t.Errorf("NodeDevices(n1) = %+v %v, want 2 devices", d, ok)
	}
	if s := snap.MovementSuggestions(probeOwner); s["n2"] != 2 || s["n3"] != 1 {
		t.Errorf("MovementSuggestions = %v, want n2:2 n3:1", s)
	}

	// Later events: not in the snapshot until it is updated.
	must(h.Delete(web("m1", "n1")))
	must(a.ForgetPod(gangMember("g2", "n3")))
	must(a.AssumePod(cachePod("c1", "n1")))
	must(h.Add(cachePod("c2", "n1")))
	must(h.Delete(ts.MakePDB("ns", "cache-budget", 0, "app", "cache")))
	must(h.Delete(ts.MakeReservation("ns", "r2", "n2", "1", "1Gi", "app", "other")))
	must(h.Delete(ts.MakeNode("n3", "8", "16Gi")))
	second := answers(r)
	if sameValue.DeepEqual(first, second) {
		t.Fatal("the later events changed nothing the queries see")
	}
	sameAnswers(t, "snapshot before its update", answers(snap), first)

	must(r.UpdateSnapshot(snap))
	sameAnswers(t, "updated snapshot", answers(snap), second)

	// A new snapshot, filled in one go, answers the same as the one updated incrementally.
	fresh := r.NewSnapshot(SnapshotOptions{})
	must(r.UpdateSnapshot(fresh))
	sameAnswers(t, "fresh snapshot", answers(fresh), second)
}
