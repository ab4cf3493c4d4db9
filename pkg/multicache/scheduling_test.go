package multicache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/controllers"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestReader_RoomHeldFromAPodLeavesOutTheReservationsItMayConsume: a Reserved reservation
// is room held from every pod it does not select, with one pod slot, and room a pod it
// selects may use; once matched it holds nothing from anyone.
func TestReader_RoomHeldFromAPodLeavesOutTheReservationsItMayConsume(t *testing.T) {
	h := newHandler(t)
	r := readerOf(h)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(h.Add(ts.MakeNode("n2", "4", "8Gi")))
	must(h.Add(ts.MakeReservation("ns", "r", "n1", "2", "1Gi", "app", "db")))

	stranger := ts.MakePod("ns", "web", ts.Requests("1", "1Gi"), ts.WithLabels("app", "web"))
	held := r.RoomHeldFrom(stranger)
	if got := held["n1"]; got.MilliCPU != 2000 || got.Memory != 1<<30 || got.Pods != 1 {
		t.Errorf("held from an unrelated pod on n1 = %+v, want 2 CPU, 1Gi, 1 pod", got)
	}
	if _, ok := held["n2"]; ok || len(held) != 1 {
		t.Errorf("held from an unrelated pod = %+v, want n1 only", held)
	}
	owner := ts.MakePod("ns", "db-0", ts.Requests("1", "1Gi"), ts.WithLabels("app", "db"))
	if held := r.RoomHeldFrom(owner); len(held) != 0 {
		t.Errorf("held from the pod the reservation selects = %+v, want nothing", held)
	}

	must(h.Add(ts.MakePod("ns", "db-0", ts.Requests("1", "1Gi"), ts.WithLabels("app", "db"), ts.OnNode("n1"))))
	if rsv, _ := r.Reservation(types.NamespacedName{Namespace: "ns", Name: "r"}); rsv.Phase != v1alpha1.ReservationMatched {
		t.Fatalf("the owner landed on n1 but the reservation is %s", rsv.Phase)
	}
	if held := r.RoomHeldFrom(stranger); len(held) != 0 {
		t.Errorf("a matched reservation still holds %+v from an unrelated pod", held)
	}
}

// TestPodGroupKeysOf_OneKeyPerSourceThatNamesAGroup: each source's membership rule gives
// the key the cache holds that source's group under; a pod of no group has none.
func TestPodGroupKeysOf_OneKeyPerSourceThatNamesAGroup(t *testing.T) {
	pod := ts.MakePod("ns", "p", ts.WithLabels(v1alpha1.PodGroupLabel, "a", "scheduling.x-k8s.io/pod-group", "b"))
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("c")}
	got := PodGroupKeysOf(pod)
	want := []types.NamespacedName{
		PodGroupKey(store.PodGroupSourceMulticache, "ns", "a"),
		PodGroupKey(store.PodGroupSourceNative, "ns", "c"),
		PodGroupKey(store.PodGroupSourceSchedulerPlugins, "ns", "b"),
	}
	if len(got) != len(want) {
		t.Fatalf("PodGroupKeysOf = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("key %d = %v, want %v", i, got[i], want[i])
		}
	}
	if keys := PodGroupKeysOf(ts.MakePod("ns", "alone")); keys != nil {
		t.Errorf("a pod of no group has keys %v", keys)
	}
}

// TestPodGroup_MinMemberIsTheGangSizeOnceTheGroupIsKnown: the view's MinMember reads the
// group's spec, and is 0 while only members are known.
func TestPodGroup_MinMemberIsTheGangSizeOnceTheGroupIsKnown(t *testing.T) {
	h := newHandler(t)
	r := readerOf(h)
	if err := h.Add(ts.MakePod("ns", "m1", ts.InGroup("g"))); err != nil {
		t.Fatal(err)
	}
	key := PodGroupKey(store.PodGroupSourceMulticache, "ns", "g")
	if g, ok := r.PodGroup(key); !ok || g.MinMember() != 0 {
		t.Errorf("members only: %+v %v, want MinMember 0", g, ok)
	}
	if err := h.Add(ts.MakePodGroup("ns", "g", 4)); err != nil {
		t.Fatal(err)
	}
	if g, ok := r.PodGroup(key); !ok || g.MinMember() != 4 {
		t.Errorf("with the group: MinMember %d (%v), want 4", g.MinMember(), ok)
	}
}

// TestPodGroupsForPod_EverySourceWithItsMinMember: a pod that three sources' rules make a
// member of three groups gets the three, each with its gang size and the pod counted
// active, from the Reader and a snapshot alike; the exported labels are the rules' own.
func TestPodGroupsForPod_EverySourceWithItsMinMember(t *testing.T) {
	if PodGroupLabel != "multicache.dev/pod-group" || SchedulerPluginsPodGroupLabel != "scheduling.x-k8s.io/pod-group" {
		t.Fatalf("membership labels %q, %q changed", PodGroupLabel, SchedulerPluginsPodGroupLabel)
	}
	h := newHandler(t)
	r := readerOf(h)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(h.Add(ts.MakePodGroup("ns", "a", 2)))
	must(h.Add(controllers.PodGroupFromNative(ts.MakeNativePodGroup("ns", "c", 3))))
	sp, err := controllers.PodGroupFromSchedulerPlugins(ts.MakeSchedulerPluginsPodGroup("ns", "b", 4))
	must(err)
	must(h.Add(sp))
	pod := ts.MakePod("ns", "p", ts.OnNode("n1"), ts.WithLabels(PodGroupLabel, "a", SchedulerPluginsPodGroupLabel, "b"))
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("c")}
	must(h.Add(pod))

	snap := r.NewSnapshot(SnapshotOptions{})
	must(r.UpdateSnapshot(snap))
	want := map[store.PodGroupSource]int32{store.PodGroupSourceMulticache: 2, store.PodGroupSourceNative: 3, store.PodGroupSourceSchedulerPlugins: 4}
	for name, gs := range map[string][]store.PodGroup{"Reader": r.PodGroupsForPod(pod), "Snapshot": snap.PodGroupsForPod(pod)} {
		if len(gs) != len(want) {
			t.Fatalf("%s: %d groups %+v, want %d", name, len(gs), gs, len(want))
		}
		for _, g := range gs {
			if g.MinMember() != want[g.Source] || g.Counts.Active() != 1 {
				t.Errorf("%s: %s group %v: MinMember %d, %d active; want %d, 1", name, g.Source, g.Key, g.MinMember(), g.Counts.Active(), want[g.Source])
			}
		}
	}
	if gs := r.PodGroupsForPod(ts.MakePod("ns", "alone")); gs != nil {
		t.Errorf("a pod of no group: %+v", gs)
	}
}
