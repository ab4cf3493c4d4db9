package podgroupstore

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/testsupport/invariants"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestCheckInvariants_FindsEveryCorruption corrupts a healthy store one way at a time and
// expects the deferred check, finished after the state it copied changed back, to report
// it: what the check reads under the lock is what it judges.
func TestCheckInvariants_FindsEveryCorruption(t *testing.T) {
	gang := types.NamespacedName{Namespace: "ns", Name: "gang"}
	invariants.CheckCorruptions(t, func(t *testing.T) *Store {
		config, err := stores.NewCacheHandler(stores.Config{})
		if err != nil {
			t.Fatal(err)
		}
		s := New(config)
		s.AddPodGroup(&v1alpha1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gang"}, Spec: v1alpha1.PodGroupSpec{MinMember: 2},
		})
		s.AddPod(pod("a", "gang", "n1"))
		s.AddPod(pod("b", "gang", ""))
		s.TakeOutbox() // as the handler does after every call
		return s
	}, []invariants.Corruption[*Store]{
		{Name: "counts off by one", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			g.counts.Running++
			return func() { g.counts.Running-- }
		}, Want: "pod group ns/gang: counts", Unique: "does not belong"},
		{Name: "a member of another group", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			stranger := types.NamespacedName{Namespace: "ns", Name: "stranger"}
			g.members[stranger] = pod("stranger", "", "")
			return func() { delete(g.members, stranger) }
		}, Want: "pod group ns/gang: member ns/stranger does not belong to it", Unique: "does not belong"},
		{Name: "a member filed under another pod's key", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			a := types.NamespacedName{Namespace: "ns", Name: "a"}
			alias := types.NamespacedName{Namespace: "ns", Name: "alias"}
			g.members[alias] = g.members[a]
			delete(g.members, a)
			return func() { g.members[a] = g.members[alias]; delete(g.members, alias) }
		}, Want: "pod group ns/gang: member ns/alias does not belong to it", Unique: "does not belong"},
		{Name: "a stranger filed under another pod's key", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			alias := types.NamespacedName{Namespace: "ns", Name: "alias"}
			g.members[alias] = pod("stranger", "", "")
			return func() { delete(g.members, alias) }
		}, Want: "pod group ns/gang: member ns/alias does not belong to it", Unique: "does not belong"},
		{Name: "a group without object or members", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			pg, members, counts := g.pg, g.members, g.counts
			g.pg, g.members, g.counts = nil, map[types.NamespacedName]*corev1.Pod{}, store.PodGroupCounts{}
			return func() { g.pg, g.members, g.counts = pg, members, counts }
		}, Want: "pod group ns/gang: kept without object or members", Unique: "does not belong"},
		{Name: "a group filed under another key", Corrupt: func(s *Store) func() {
			g, _ := s.groups.Get(gang)
			g.key.Name = "elsewhere"
			return func() { g.key = gang }
		}, Want: "pod group ns/elsewhere: filed under ns/gang", Unique: "does not belong"},
	})
}

// pod is a pod of namespace ns, in group (none when empty), on node (none when empty).
func pod(name, group, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	if group != "" {
		p.Labels = map[string]string{v1alpha1.PodGroupLabel: group}
	}
	return p
}
