package podgroupstore_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/controllers"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var (
	nativeKey = podgroupstore.Key(store.PodGroupSourceNative, "ns", "gang")
	spKey     = podgroupstore.Key(store.PodGroupSourceSchedulerPlugins, "ns", "gang")
)

func mustSP(t *testing.T, minMember int64) *podgroupstore.Store {
	t.Helper()
	s, _ := newStore(t)
	pg, err := controllers.PodGroupFromSchedulerPlugins(ts.MakeSchedulerPluginsPodGroup("ns", "gang", minMember))
	if err != nil {
		t.Fatal(err)
	}
	s.AddPodGroup(pg)
	return s
}

func TestPodGroupSources_SameNameInThreeAPIsAreThreeGroups(t *testing.T) {
	s, changed := newStore(t)
	s.AddPodGroup(ts.MakePodGroup("ns", "gang", 1))
	s.AddPodGroup(controllers.PodGroupFromNative(ts.MakeNativePodGroup("ns", "gang", 2)))
	sp, err := controllers.PodGroupFromSchedulerPlugins(ts.MakeSchedulerPluginsPodGroup("ns", "gang", 3))
	if err != nil {
		t.Fatal(err)
	}
	s.AddPodGroup(sp)
	s.AddPod(ts.MakePod("ns", "own", ts.InGroup("gang"), ts.OnNode("n1")))
	s.AddPod(ts.MakePod("ns", "native", ts.InNativeGroup("gang"), ts.OnNode("n1")))
	s.AddPod(ts.MakePod("ns", "sp", ts.InSchedulerPluginsGroup("gang")))
	s.AddPod(ts.MakePod("ns", "all", ts.InGroup("gang"), ts.InNativeGroup("gang"), ts.InSchedulerPluginsGroup("gang"),
		ts.InPhase(corev1.PodRunning), ts.OnNode("n1")))

	if s.Len() != 3 {
		t.Fatalf("%d groups, want 3 (one per API)", s.Len())
	}
	for _, c := range []struct {
		key       types.NamespacedName
		minMember int32
		want      store.PodGroupCounts
	}{
		{groupKey, 1, store.PodGroupCounts{Scheduled: 1, Running: 1}},
		{nativeKey, 2, store.PodGroupCounts{Scheduled: 1, Running: 1}},
		{spKey, 3, store.PodGroupCounts{Pending: 1, Running: 1}},
	} {
		st, ok := s.Get(c.key)
		if src, _ := podgroupstore.SourceOf(c.key); st.Source != src {
			t.Errorf("%s: source %q, want %q", c.key, st.Source, src)
		}
		if !ok || st.Counts != c.want || st.PodGroup.Spec.MinMember != c.minMember {
			t.Errorf("%s: found %v, counts %+v minMember %d; want %+v minMember %d", c.key, ok, st.Counts, st.PodGroup.Spec.MinMember, c.want, c.minMember)
		}
	}
	for _, k := range changed() {
		if k != groupKey {
			t.Errorf("status writer told about %s: only multicache's own groups have a status to write", k)
		}
	}
	dump := s.Dump().(map[string]podgroupstore.GroupDump)
	if d := dump["ns/scheduling.k8s.io/gang"]; d.Source != store.PodGroupSourceNative || !d.Exists || d.MinMember != 2 {
		t.Errorf("dump of the native group: %+v", d)
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPodGroupSources_NativeMemberLeavesLowersTheCounts(t *testing.T) {
	s, _ := newStore(t)
	s.AddPodGroup(controllers.PodGroupFromNative(ts.MakeNativePodGroup("ns", "gang", 3)))
	pods := []*corev1.Pod{}
	for _, n := range []string{"a", "b", "c"} {
		p := ts.MakePod("ns", n, ts.InNativeGroup("gang"), ts.OnNode("n1"), ts.InPhase(corev1.PodRunning))
		pods = append(pods, p)
		s.AddPod(p)
	}
	st, _ := s.Get(nativeKey)
	if st.Phase(time.Now()) != "Running" {
		t.Fatalf("3 of 3 running: phase %s, want Running", st.Phase(time.Now()))
	}
	s.DeletePod(pods[0])
	st, _ = s.Get(nativeKey)
	if st.Counts.Running != 2 || st.MinMemberReached {
		t.Errorf("after a member left: %+v reached=%v, want 2 running and minMember not reached", st.Counts, st.MinMemberReached)
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPodGroupSources_MemberMovesBetweenSources(t *testing.T) {
	s := mustSP(t, 1)
	p := ts.MakePod("ns", "p", ts.InSchedulerPluginsGroup("gang"))
	s.AddPod(p)
	moved := ts.MakePod("ns", "p", ts.InNativeGroup("gang"))
	s.UpdatePod(p, moved)
	if st, _ := s.Get(spKey); st.Counts.Total() != 0 {
		t.Errorf("the scheduler-plugins group still counts the pod: %+v", st.Counts)
	}
	if st, ok := s.Get(nativeKey); !ok || st.Counts.Total() != 1 || st.PodGroup != nil {
		t.Errorf("the native group (no object yet) does not count the pod: %v %+v", ok, st)
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPodGroupSources_DisabledSourceCountsNothing(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{PodGroupSources: []store.PodGroupSource{store.PodGroupSourceMulticache}})
	if err != nil {
		t.Fatal(err)
	}
	s := podgroupstore.New(config)
	s.AddPod(ts.MakePod("ns", "p", ts.InNativeGroup("gang"), ts.InSchedulerPluginsGroup("gang")))
	if s.Len() != 0 {
		t.Errorf("%d groups kept for sources that are not followed: %v", s.Len(), s.Dump())
	}
}

func TestPodGroupSources_KeysCannotCollide(t *testing.T) {
	seen := map[types.NamespacedName]store.PodGroupSource{}
	for _, src := range store.PodGroupSources {
		k := podgroupstore.Key(src, "ns", "a")
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share the key %s", src, other, k)
		}
		seen[k] = src
		if gotSrc, name := podgroupstore.SourceOf(k); gotSrc != src || name != "a" {
			t.Errorf("SourceOf(%s) = %s, %s; want %s, a", k, gotSrc, name, src)
		}
	}
}

func TestPodGroupSources_SchedulerPluginsTimeoutAndStartTime(t *testing.T) {
	u := ts.MakeSchedulerPluginsPodGroup("ns", "gang", 2)
	u.Object["spec"].(map[string]any)["scheduleTimeoutSeconds"] = int64(30)
	u.Object["status"] = map[string]any{"scheduleStartTime": "2026-01-01T01:00:00Z"}
	pg, err := controllers.PodGroupFromSchedulerPlugins(u)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newStore(t)
	s.AddPodGroup(pg)
	st, _ := s.Get(spKey)
	if want := t0.Add(time.Hour + 30*time.Second); !st.TimeoutAt.Equal(want) {
		t.Errorf("timeout at %v, want %v", st.TimeoutAt, want)
	}
}
