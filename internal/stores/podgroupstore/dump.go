package podgroupstore

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// GroupDump is the debug view of one pod group.
type GroupDump struct {
	// Source is the API the group comes from (multicache, native, scheduler-plugins).
	Source stores.PodGroupSource `json:"source"`
	// Exists is false when members exist but the PodGroup does not.
	Exists           bool                   `json:"exists"`
	MinMember        int32                  `json:"minMember,omitempty"`
	Phase            v1alpha1.PodGroupPhase `json:"phase,omitempty"`
	Counts           Counts                 `json:"counts"`
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

// CheckInvariants implements stores.Store: each group's counts equal a recount of its
// members, every member names the group (by its source's rule) and lives in its namespace,
// and no group is kept without an object or members.
func (s *Store) CheckInvariants() []error {
	var errs []error
	s.groups.Range(func(key types.NamespacedName, g *group) bool {
		var recount Counts
		for mk, pod := range g.members {
			recount.add(pod, 1)
			if keys := s.groupsOf(pod); !keys.has(key) || stores.PodKey(pod) != mk {
				errs = append(errs, fmt.Errorf("pod group %s: member %s does not belong to it", key, mk))
			}
		}
		if recount != g.counts {
			errs = append(errs, fmt.Errorf("pod group %s: counts %+v, members recount to %+v", key, g.counts, recount))
		}
		if g.pg == nil && len(g.members) == 0 {
			errs = append(errs, fmt.Errorf("pod group %s: kept without object or members", key))
		}
		if g.key != key {
			errs = append(errs, fmt.Errorf("pod group %s: filed under %s", g.key, key))
		}
		return true
	})
	return errs
}
