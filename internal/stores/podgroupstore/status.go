package podgroupstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Counts are a group's members by where they are.
type Counts struct {
	// Pending members are not placed on a node yet.
	Pending int32 `json:"pending"`
	// Scheduled members are assumed or bound to a node, not running yet.
	Scheduled int32 `json:"scheduled"`
	Running   int32 `json:"running"`
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
}

// Total is the number of members.
func (c Counts) Total() int32 { return c.Pending + c.Scheduled + c.Running + c.Succeeded + c.Failed }

// Placed is the number of members that are or were on a node and did not fail.
func (c Counts) Placed() int32 { return c.Scheduled + c.Running + c.Succeeded }

// Add counts pod (delta +1) or uncounts it (-1).
func (c *Counts) Add(pod *corev1.Pod, delta int32) {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		c.Succeeded += delta
	case corev1.PodFailed:
		c.Failed += delta
	case corev1.PodRunning:
		c.Running += delta
	default:
		if pod.Spec.NodeName != "" {
			c.Scheduled += delta
		} else {
			c.Pending += delta
		}
	}
}

// GroupStatus is what the cache derives for one pod group.
type GroupStatus struct {
	// Key is the group's key in the store: namespace/name, or namespace/<API group>/name
	// for a source other than multicache's own (SourceOf splits it).
	Key types.NamespacedName
	// Source is the API the group comes from.
	Source store.PodGroupSource
	// PodGroup is the object; nil when only members exist.
	PodGroup *v1alpha1.PodGroup
	Counts   Counts
	// Members are the member pods' keys.
	Members []types.NamespacedName
	// MinMemberReached is set when at least minMember members are placed.
	MinMemberReached bool
	// ScheduleStartTime is when the schedule timeout started: the status's time if set, else
	// the group's creation.
	ScheduleStartTime time.Time
	// TimeoutAt is when the group times out unless minMember are placed; zero for never.
	TimeoutAt time.Time
}

// Phase derives the group's phase at time now (the timeout depends on it).
func (g GroupStatus) Phase(now time.Time) v1alpha1.PodGroupPhase {
	if g.PodGroup == nil {
		return ""
	}
	c, minMember := g.Counts, g.PodGroup.Spec.MinMember
	switch {
	case c.Succeeded >= minMember && c.Pending+c.Scheduled+c.Running == 0:
		return v1alpha1.PodGroupFinished
	case c.Failed > 0 && c.Total()-c.Failed < minMember:
		return v1alpha1.PodGroupFailed
	case c.Running+c.Succeeded >= minMember:
		return v1alpha1.PodGroupRunning
	case c.Placed() >= minMember:
		return v1alpha1.PodGroupScheduled
	case !g.TimeoutAt.IsZero() && !now.Before(g.TimeoutAt):
		return v1alpha1.PodGroupTimeout
	case c.Total() >= minMember:
		return v1alpha1.PodGroupPreScheduling
	default:
		return v1alpha1.PodGroupPending
	}
}

// status derives a group's status.
func (g *group) status() GroupStatus {
	src, _ := SourceOf(g.key)
	st := GroupStatus{Key: g.key, Source: src, PodGroup: g.pg, Counts: g.counts, Members: make([]types.NamespacedName, 0, len(g.members))}
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
func (s *Store) Get(key types.NamespacedName) (GroupStatus, bool) {
	g, ok := s.groups.Get(key)
	if !ok {
		return GroupStatus{}, false
	}
	return g.status(), true
}
