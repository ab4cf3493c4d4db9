package podgroupstore_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var (
	t0       = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	groupKey = types.NamespacedName{Namespace: "ns", Name: "gang"}
)

// newStore returns an empty store and a function returning the pod groups it reported
// changed (its Outbox) since the last call.
func newStore(t *testing.T) (*podgroupstore.Store, func() []types.NamespacedName) {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := podgroupstore.New(config)
	return s, func() []types.NamespacedName {
		var keys []types.NamespacedName
		_, changed := s.TakeOutbox()
		for _, c := range changed {
			if c.Kind == stores.KindPodGroup {
				keys = append(keys, c.Key)
			}
		}
		return keys
	}
}

func member(name string, opts ...ts.PodOption) *corev1.Pod {
	return ts.MakePod("ns", name, append([]ts.PodOption{ts.InGroup("gang")}, opts...)...)
}

func TestPodGroup_CountsMembersByPlacementAndPhase(t *testing.T) {
	s, changed := newStore(t)
	s.AddPod(member("early")) // before its group: counted once the group comes
	s.AddPodGroup(ts.MakePodGroup("ns", "gang", 3))
	s.AddPod(member("bound", ts.OnNode("n1")))
	s.AddPod(member("running", ts.OnNode("n1"), ts.InPhase(corev1.PodRunning)))
	s.AddPod(member("done", ts.OnNode("n1"), ts.InPhase(corev1.PodSucceeded)))
	s.AddPod(member("broken", ts.OnNode("n1"), ts.InPhase(corev1.PodFailed)))
	s.AddPod(ts.MakePod("ns", "stranger", ts.OnNode("n1")))
	s.AddPod(ts.MakePod("other", "same-label-other-ns", ts.InGroup("gang")))

	st, ok := s.Get(groupKey)
	want := store.PodGroupCounts{Pending: 1, Scheduled: 1, Running: 1, Succeeded: 1, Failed: 1}
	if !ok || st.Counts != want {
		t.Fatalf("counts %+v, want %+v", st.Counts, want)
	}
	if !st.MinMemberReached {
		t.Error("3 members placed (scheduled, running, succeeded) but minMember 3 not reached")
	}
	if len(changed()) == 0 {
		t.Error("the status writer was never told")
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPodGroup_MemberMovesBetweenGroupsWhenItsLabelChanges(t *testing.T) {
	s, _ := newStore(t)
	s.AddPodGroup(ts.MakePodGroup("ns", "gang", 1))
	s.AddPodGroup(ts.MakePodGroup("ns", "other", 1))
	p := member("p")
	s.AddPod(p)
	moved := ts.MakePod("ns", "p", ts.InGroup("other"))
	s.UpdatePod(p, moved)
	if st, _ := s.Get(groupKey); st.Counts.Total() != 0 {
		t.Errorf("old group still counts the pod: %+v", st.Counts)
	}
	if st, _ := s.Get(types.NamespacedName{Namespace: "ns", Name: "other"}); st.Counts.Total() != 1 {
		t.Errorf("new group does not count the pod: %+v", st.Counts)
	}
	s.DeletePod(moved)
	s.DeletePodGroup(ts.MakePodGroup("ns", "other", 1))
	if s.Len() != 1 {
		t.Errorf("%d groups kept, want 1 (the empty group without object must go)", s.Len())
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPodGroup_PhaseFollowsTheMembers(t *testing.T) {
	pg := ts.MakePodGroup("ns", "gang", 3)
	pg.CreationTimestamp = metav1.NewTime(t0)
	pg.Spec.ScheduleTimeoutSeconds = ptr.To[int32](60)
	cases := []struct {
		name   string
		counts store.PodGroupCounts
		now    time.Time
		want   v1alpha1.PodGroupPhase
	}{
		{"too few members", store.PodGroupCounts{Pending: 2}, t0, v1alpha1.PodGroupPending},
		{"enough members, none placed", store.PodGroupCounts{Pending: 3}, t0, v1alpha1.PodGroupPreScheduling},
		{"minMember assumed or bound", store.PodGroupCounts{Scheduled: 2, Running: 1}, t0, v1alpha1.PodGroupScheduled},
		{"minMember running", store.PodGroupCounts{Running: 3, Pending: 1}, t0, v1alpha1.PodGroupRunning},
		{"all done", store.PodGroupCounts{Succeeded: 3}, t0, v1alpha1.PodGroupFinished},
		{"too many failed", store.PodGroupCounts{Running: 1, Failed: 2}, t0, v1alpha1.PodGroupFailed},
		{"timed out unplaced", store.PodGroupCounts{Pending: 3}, t0.Add(time.Minute), v1alpha1.PodGroupTimeout},
		{"placed before the timeout stays scheduled", store.PodGroupCounts{Scheduled: 3}, t0.Add(time.Hour), v1alpha1.PodGroupScheduled},
		{"one second before the timeout", store.PodGroupCounts{Pending: 1}, t0.Add(59 * time.Second), v1alpha1.PodGroupPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := store.PodGroup{PodGroup: pg, Counts: tc.counts, TimeoutAt: t0.Add(time.Minute)}
			if got := st.Phase(tc.now); got != tc.want {
				t.Errorf("phase %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPodGroup_TimeoutCountsFromTheStatusStartTime(t *testing.T) {
	s, _ := newStore(t)
	pg := ts.MakePodGroup("ns", "gang", 2)
	pg.CreationTimestamp = metav1.NewTime(t0)
	pg.Spec.ScheduleTimeoutSeconds = ptr.To[int32](30)
	pg.Status.ScheduleStartTime = &metav1.Time{Time: t0.Add(time.Hour)}
	s.AddPodGroup(pg)
	st, _ := s.Get(groupKey)
	if !st.TimeoutAt.Equal(t0.Add(time.Hour + 30*time.Second)) {
		t.Errorf("timeout at %v, want start time from status + 30s", st.TimeoutAt)
	}
}
