package podgroupstore

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// GroupDump is the debug view of one pod group.
type GroupDump struct {
	// Source is the API the group comes from (multicache, native, scheduler-plugins).
	Source store.PodGroupSource `json:"source"`
	// Exists is false when members exist but the PodGroup does not.
	Exists           bool                   `json:"exists"`
	MinMember        int32                  `json:"minMember,omitempty"`
	Phase            v1alpha1.PodGroupPhase `json:"phase,omitempty"`
	Counts           store.PodGroupCounts   `json:"counts"`
	MinMemberReached bool                   `json:"minMemberReached"`
	Members          []string               `json:"members"`
}

// Dump implements stores.Store: GroupDump by namespace/name.
func (s *Store) Dump() any {
	now := s.h.Clock().Now()
	out := map[string]GroupDump{}
	s.groups.Range(func(key types.NamespacedName, g *group) bool {
		st := g.status()
		src, _ := SourceOf(key)
		d := GroupDump{Source: src, Exists: g.pg != nil, Counts: st.Counts, MinMemberReached: st.MinMemberReached, Phase: st.Phase(now)}
		if g.pg != nil {
			d.MinMember = g.pg.Spec.MinMember
		}
		for _, m := range st.Members {
			d.Members = append(d.Members, m.String())
		}
		sort.Strings(d.Members)
		out[key.String()] = d
		return true
	})
	return out
}

// CheckInvariants implements stores.Store: CheckInvariantsDeferred, finished at once.
func (s *Store) CheckInvariants() []error { return s.CheckInvariantsDeferred()() }

// CheckInvariantsDeferred implements stores.DeferredChecker: each group's counts equal a
// recount of its members, every member names the group (by its source's rule) and lives in
// its namespace, and no group is kept without an object or members. Recounting and naming
// every member is the costly part (20,000 members held the handler's lock for 7 ms): under
// the lock each member's key is compared with its pod's and the pods are copied into one
// slice (pods are never mutated, only replaced); the rest runs in the function returned.
func (s *Store) CheckInvariantsDeferred() func() []error {
	type groupCopy struct {
		key, filed types.NamespacedName
		exists     bool
		counts     store.PodGroupCounts
		from, to   int // its members in members[from:to]
	}
	var errs []error
	if err := s.Untaken(); err != nil {
		errs = append(errs, err)
	}
	groups := make([]groupCopy, 0, s.groups.Len())
	var members []*corev1.Pod
	// misfiled are the members (by index) filed under another key than their pod's.
	misfiled := map[int]bool{}
	s.groups.Range(func(key types.NamespacedName, g *group) bool {
		c := groupCopy{key: key, filed: g.key, exists: g.pg != nil, counts: g.counts, from: len(members)}
		for mk, pod := range g.members {
			if store.PodKey(pod) != mk {
				errs = append(errs, fmt.Errorf("pod group %s: member %s does not belong to it", key, mk))
				misfiled[len(members)] = true // reported once, here
			}
			members = append(members, pod)
		}
		c.to = len(members)
		groups = append(groups, c)
		return true
	})
	return func() []error {
		var y yield.Yielder // off the lock, as long as a part of the node check: it yields
		for _, g := range groups {
			var recount store.PodGroupCounts
			for i, pod := range members[g.from:g.to] {
				y.Step()
				recount.Add(pod, 1)
				if keys := s.groupsOf(pod); !keys.has(g.key) && !misfiled[g.from+i] {
					errs = append(errs, fmt.Errorf("pod group %s: member %s does not belong to it", g.key, store.PodKey(pod)))
				}
			}
			if recount != g.counts {
				errs = append(errs, fmt.Errorf("pod group %s: counts %+v, members recount to %+v", g.key, g.counts, recount))
			}
			if !g.exists && g.to == g.from {
				errs = append(errs, fmt.Errorf("pod group %s: kept without object or members", g.key))
			}
			if g.filed != g.key {
				errs = append(errs, fmt.Errorf("pod group %s: filed under %s", g.filed, g.key))
			}
		}
		return errs
	}
}
