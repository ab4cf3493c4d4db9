package e2e

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// fakeIndex is a PodIndex over fixed records.
type fakeIndex map[string]PodRecord

func (f fakeIndex) Pod(key string) (PodRecord, bool) { r, ok := f[key]; return r, ok }
func (f fakeIndex) ByHold(key string) (PodRecord, bool) {
	for _, r := range f {
		if r.Hold == key {
			return r, true
		}
	}
	return PodRecord{}, false
}

func holdsPod(name, node string, rs types.UID, deleting bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: rs, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}},
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return p
}

func replicaSet(uid types.UID, replicas int32) appsv1.ReplicaSet {
	return appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{UID: uid}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)}}
}

// rolloutSet is ReplicaSet uid of Deployment d1 at a revision.
func rolloutSet(uid types.UID, replicas int32, revision string) appsv1.ReplicaSet {
	rs := replicaSet(uid, replicas)
	rs.Annotations = map[string]string{store.DeploymentRevisionAnnotation: revision}
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d1", Controller: ptr.To(true)}}
	return rs
}

func view(node string, cpu string, pods, holds []string) NodeView {
	return NodeView{Name: node, Requested: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}, Pods: pods, Reservations: holds}
}

// TestAccountNode: the expectation is live pods (either list), stale pods (neither list:
// the feed's lag) and holds whose ReplicaSet still wants a pod (either list, or an earlier
// one); anything charged above is the excess, and the holds behind it are named.
func TestAccountNode(t *testing.T) {
	idx := fakeIndex{
		"ns/a":    {UID: "uid-a", ReplicaSet: "rs1", MilliCPU: 500, Hold: "ns/a-hold"},
		"ns/b":    {UID: "uid-b", ReplicaSet: "rs1", MilliCPU: 500, Hold: "ns/b-hold"},
		"ns/gone": {UID: "uid-gone", ReplicaSet: "rs1", MilliCPU: 500, Hold: "ns/gone-hold"},
	}
	a, b := holdsPod("a", "n1", "rs1", false), holdsPod("b", "n1", "rs1", false)
	bDeleting := holdsPod("b", "n1", "rs1", true)
	satisfied := []appsv1.ReplicaSet{replicaSet("rs1", 2)}
	wanting := []appsv1.ReplicaSet{replicaSet("rs1", 3)}

	for _, tc := range []struct {
		name          string
		view          NodeView
		before, after APIList
		earlier       []APIList
		wantExcess    int64
		wantStale     int64
		wantUnjust    []string
	}{
		{name: "live pods only",
			view:   view("n1", "1", []string{"ns/a", "ns/b"}, nil),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil)},
		{name: "a pod deleted between the lists may be charged",
			view:   view("n1", "1", []string{"ns/a", "ns/b"}, nil),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a}, satisfied, nil)},
		{name: "a pod the API deleted before the first list is stale, not excess",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b", "ns/gone"}, nil),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil),
			wantStale: 500},
		{name: "a hold whose ReplicaSet is satisfied is a double charge",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b"}, []string{"ns/gone-hold"}),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil),
			wantExcess: 500, wantUnjust: []string{"ns/gone-hold"}},
		{name: "a pod being deleted does not count as landed: its ReplicaSet wants one",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b"}, []string{"ns/gone-hold"}),
			before: NewAPIList([]corev1.Pod{a, bDeleting}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, bDeleting}, satisfied, nil)},
		{name: "a hold whose ReplicaSet wants a pod in one list is justified",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b"}, []string{"ns/gone-hold"}),
			before: NewAPIList([]corev1.Pod{a, b}, wanting, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil)},
		{name: "or in the sample before",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b"}, []string{"ns/gone-hold"}),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil),
			earlier: []APIList{NewAPIList([]corev1.Pod{a}, satisfied, nil)}},
		{name: "a hold nobody can attribute is excess",
			view:   view("n1", "1500m", []string{"ns/a", "ns/b"}, []string{"ns/unknown"}),
			before: NewAPIList([]corev1.Pod{a, b}, wanting, nil), after: NewAPIList([]corev1.Pod{a, b}, wanting, nil),
			wantExcess: 500, wantUnjust: []string{"ns/unknown"}},
		{name: "pods on another node do not count",
			view:   view("n2", "500m", []string{"ns/a"}, nil),
			before: NewAPIList([]corev1.Pod{a, b}, satisfied, nil), after: NewAPIList([]corev1.Pod{a, b}, satisfied, nil),
			wantExcess: 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AccountNode(tc.view, tc.before, tc.after, idx, tc.earlier...)
			if got.Excess != tc.wantExcess || got.Stale != tc.wantStale || !slices.Equal(got.Unjustified, tc.wantUnjust) {
				t.Errorf("excess %d, stale %d, unjustified %v; want %d, %d, %v (%+v)",
					got.Excess, got.Stale, got.Unjustified, tc.wantExcess, tc.wantStale, tc.wantUnjust, got)
			}
			if got.Legit() != got.Charged-got.Excess {
				t.Errorf("legit %d, want charged %d less excess %d", got.Legit(), got.Charged, got.Excess)
			}
		})
	}
}

// TestAccountNode_ARolloutsHoldWaitsForTheNewestReplicaSet: the hold of an old
// ReplicaSet's pod (scaled down, wanting nothing) is justified while the Deployment's
// newest ReplicaSet has fewer landed pods than the Deployment wants, and not after.
func TestAccountNode_ARolloutsHoldWaitsForTheNewestReplicaSet(t *testing.T) {
	idx := fakeIndex{"ns/old": {UID: "uid-old", ReplicaSet: "rs1", MilliCPU: 500, Hold: "ns/old-hold"}}
	deployment := []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{UID: "d1"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))}}}
	// Revision 10 is listed before 9: the newest is by number, not by place or as a string.
	sets := []appsv1.ReplicaSet{rolloutSet("rs2", 2, "10"), rolloutSet("rs1", 0, "9")}
	a, c := holdsPod("a", "n1", "rs2", false), holdsPod("c", "n2", "rs2", false)
	v := view("n1", "1", []string{"ns/a"}, []string{"ns/old-hold"})

	rolling := NewAPIList([]corev1.Pod{a}, sets, deployment)
	if got := AccountNode(v, rolling, rolling, idx); got.Excess != 0 || len(got.Unjustified) != 0 {
		t.Errorf("the newest ReplicaSet has 1 of 2: excess %d, unjustified %v; want none", got.Excess, got.Unjustified)
	}
	done := NewAPIList([]corev1.Pod{a, c}, sets, deployment)
	if got := AccountNode(v, done, done, idx); got.Excess != 500 || !slices.Equal(got.Unjustified, []string{"ns/old-hold"}) {
		t.Errorf("the newest ReplicaSet has 2 of 2: excess %d, unjustified %v; want 500, the hold", got.Excess, got.Unjustified)
	}
	if got := AccountNode(v, done, done, idx, rolling); got.Excess != 0 {
		t.Errorf("the sample before still rolled: excess %d, want 0", got.Excess)
	}
	cDeleting := holdsPod("c", "n2", "rs2", true)
	if got := AccountNode(v, NewAPIList([]corev1.Pod{a, cDeleting}, sets, deployment), NewAPIList([]corev1.Pod{a, cDeleting}, sets, deployment), idx); got.Excess != 0 {
		t.Errorf("the newest ReplicaSet's second pod is being deleted: excess %d, want 0", got.Excess)
	}
	gone := NewAPIList([]corev1.Pod{a, c}, sets, nil)
	if got := AccountNode(v, gone, gone, idx); got.Excess != 0 {
		t.Errorf("the Deployment is not listed: excess %d, want 0 (multicache keeps the place until its TTL)", got.Excess)
	}
}

// TestSummariseHolds: holds charged after a phase's end are timed from the end to the
// first sample from which none is; one still charged at the last sample lingers.
func TestSummariseHolds(t *testing.T) {
	end := time.Unix(100, 0)
	at := func(ms int) time.Time { return end.Add(time.Duration(ms) * time.Millisecond) }
	res := &HoldsResult{
		Phases: []HoldsPhase{{Name: "p", Start: at(-1000), End: end}, {Name: "q", Start: at(4000), End: at(5000)}},
		Samples: []HoldSample{
			{At: at(-500), Phase: "p", Holds: 3},
			{At: at(200), Phase: "settle-p", Holds: 2},
			{At: at(400), Phase: "settle-p", Holds: 0},
			{At: at(600), Phase: "settle-p", Holds: 1, Excess: 500, Worst: NodeAccount{Node: "n", Charged: 1000, Excess: 500}},
			{At: at(800), Phase: "settle-p", Holds: 0},
			{At: at(3000), Phase: "settle-p", Holds: 0},
			{At: at(5500), Phase: "settle-q", Holds: 0},
			{At: at(8000), Phase: "settle-q", Holds: 1},
		},
	}
	s := SummariseHolds(res)
	if len(s) != 2 {
		t.Fatalf("%d summaries, want 2", len(s))
	}
	p, q := s[0], s[1]
	if p.HoldsGone != 800*time.Millisecond || p.Lingering || p.HoldsAfterBound != 0 || p.MaxHolds != 3 || p.WithExcess != 1 || p.MaxNode.Excess != 500 {
		t.Errorf("p: %+v; want holds gone 800ms after the end, at most 3, one sample with 500m excess", p)
	}
	if !q.Lingering || q.HoldsAfterBound != 1 {
		t.Errorf("q: %+v; want a hold lingering past the bound", q)
	}
	if probs := res.Problems(); len(probs) != 2 {
		t.Errorf("problems %q; want p's excess and q's lingering hold", probs)
	}
}
