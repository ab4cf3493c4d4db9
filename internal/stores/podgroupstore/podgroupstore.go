// Package podgroupstore keeps pod groups (gangs) and their member pods, with counts per
// phase. Groups come from several sources (stores.PodGroupSource), each with its membership
// rule: multicache's own PodGroup (pods labelled v1alpha1.PodGroupLabel=<group name>),
// Kubernetes' PodGroup (pods naming it in spec.schedulingGroup.podGroupName) and
// scheduler-plugins' (pods labelled SchedulerPluginsLabel=<group name>); members are pods
// of the group's namespace. See sources.go for how they share one key space.
package podgroupstore

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// group is one pod group: its object (nil while only members exist) and its members.
type group struct {
	key     types.NamespacedName
	pg      *v1alpha1.PodGroup
	members map[types.NamespacedName]*corev1.Pod
	counts  store.PodGroupCounts
}

// Store is the PodGroupStore.
type Store struct {
	h      *stores.CacheHandler
	groups *store.Versioned[types.NamespacedName, *group]
	// enabled tells, per sourceRules entry, whether the source is followed.
	enabled [maxGroups]bool
	// Outbox holds the groups whose status changed, until the handler takes them.
	stores.Outbox
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.DeferredChecker = (*Store)(nil)
	_ store.PodHandler      = (*Store)(nil)
	_ store.PodGroupHandler = (*Store)(nil)
)

// New returns an empty PodGroupStore.
func New(h *stores.CacheHandler) *Store {
	s := &Store{h: h, groups: store.NewVersioned[types.NamespacedName, *group](h.Generations())}
	for i, r := range sourceRules {
		s.enabled[i] = h.IsPodGroupSourceEnabled(r.source)
	}
	return s
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.PodGroupStoreName }

// Len implements stores.Store: the number of pod groups (with or without members).
func (s *Store) Len() int { return s.groups.Len() }

// AddPod adds a member pod to each of its groups (one per source at most).
func (s *Store) AddPod(pod *corev1.Pod) {
	keys := s.groupsOf(pod)
	for _, key := range keys.slice() {
		s.addMember(key, pod)
	}
}

func (s *Store) addMember(key types.NamespacedName, pod *corev1.Pod) {
	g, exists := s.groups.Get(key)
	if !exists {
		g = &group{key: key, members: map[types.NamespacedName]*corev1.Pod{}}
		s.groups.Set(key, g)
	}
	g.members[store.PodKey(pod)] = pod
	g.counts.Add(pod, 1)
	s.changed(key, g)
}

// UpdatePod follows a member through its phases, and across groups if its label (or its
// spec.schedulingGroup) changed.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	oldKeys, newKeys := s.groupsOf(oldPod), s.groupsOf(newPod)
	for _, key := range oldKeys.slice() {
		if !newKeys.has(key) {
			s.removeMember(key, oldPod)
		}
	}
	for _, key := range newKeys.slice() {
		g, ok := s.groups.Get(key)
		if !ok || !oldKeys.has(key) {
			s.addMember(key, newPod)
			continue
		}
		g.counts.Add(oldPod, -1)
		g.counts.Add(newPod, 1)
		g.members[store.PodKey(newPod)] = newPod
		s.changed(key, g)
	}
}

// DeletePod removes a member pod from its groups.
func (s *Store) DeletePod(pod *corev1.Pod) {
	keys := s.groupsOf(pod)
	for _, key := range keys.slice() {
		s.removeMember(key, pod)
	}
}

func (s *Store) removeMember(key types.NamespacedName, pod *corev1.Pod) {
	g, exists := s.groups.Get(key)
	if !exists {
		return
	}
	if cur, ok := g.members[store.PodKey(pod)]; ok {
		g.counts.Add(cur, -1)
		delete(g.members, store.PodKey(pod))
	}
	s.changedOrGone(key, g)
}

// AddPodGroup adds a group; members that arrived first are already counted.
func (s *Store) AddPodGroup(pg *v1alpha1.PodGroup) {
	key := types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name}
	g, exists := s.groups.Get(key)
	if !exists {
		g = &group{key: key, members: map[types.NamespacedName]*corev1.Pod{}}
		s.groups.Set(key, g)
	}
	g.pg = pg
	s.changed(key, g)
}

// UpdatePodGroup replaces the group object.
func (s *Store) UpdatePodGroup(_, pg *v1alpha1.PodGroup) { s.AddPodGroup(pg) }

// DeletePodGroup removes the group object; its members stay counted until they go.
func (s *Store) DeletePodGroup(pg *v1alpha1.PodGroup) {
	key := types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name}
	if g, ok := s.groups.Get(key); ok {
		g.pg = nil
		s.changedOrGone(key, g)
	}
}

func (s *Store) changed(key types.NamespacedName, g *group) {
	s.groups.Touch(key)
	// Only multicache's own PodGroups have a status to write.
	if src, _ := SourceOf(key); g.pg != nil && src == store.PodGroupSourceMulticache {
		s.ObjectChanged(stores.KindPodGroup, key)
	}
}

func (s *Store) changedOrGone(key types.NamespacedName, g *group) {
	if g.pg == nil && len(g.members) == 0 {
		s.groups.Delete(key)
		return
	}
	s.changed(key, g)
}
