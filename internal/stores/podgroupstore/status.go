package podgroupstore

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// status derives a group's status.
func (g *group) status() store.PodGroup {
	src, _ := SourceOf(g.key)
	st := store.PodGroup{Key: g.key, Source: src, PodGroup: g.pg, Counts: g.counts, Members: make([]types.NamespacedName, 0, len(g.members))}
	for k := range g.members {
		st.Members = append(st.Members, k)
	}
	if g.pg == nil {
		return st
	}
	st.MinMemberReached = g.counts.Placed() >= g.pg.Spec.MinMember
	st.ScheduleStartTime = g.pg.CreationTimestamp.Time
	if t := g.pg.Status.ScheduleStartTime; t != nil {
		st.ScheduleStartTime = t.Time
	}
	if timeout := g.pg.Spec.ScheduleTimeoutSeconds; timeout != nil {
		st.TimeoutAt = st.ScheduleStartTime.Add(time.Duration(*timeout) * time.Second)
	}
	return st
}

// Get returns the status of a group.
func (s *Store) Get(key types.NamespacedName) (store.PodGroup, bool) {
	g, ok := s.groups.Get(key)
	if !ok {
		return store.PodGroup{}, false
	}
	return g.status(), true
}
