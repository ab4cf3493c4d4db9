package movementstore

import (
	"fmt"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// MovementDump is the debug view of one movement.
type MovementDump struct {
	Exists  bool        `json:"exists"`
	Creator string      `json:"creator,omitempty"`
	Owners  []OwnerDump `json:"owners"`
	// Pods are every pod that consumed the movement, namespace/name.
	Pods []string `json:"pods"`
}

// OwnerDump is one owner's suggestions.
type OwnerDump struct {
	Owner string     `json:"owner"`
	Nodes []NodeDump `json:"nodes"`
}

// NodeDump is one node's suggestion.
type NodeDump struct {
	Node    string   `json:"node"`
	Desired int64    `json:"desired"`
	Actual  []string `json:"actual"`
}

// Dump implements stores.Store: MovementDump by name.
func (s *Store) Dump() any {
	out := map[string]MovementDump{}
	s.movements.Range(func(name string, mv *movement) bool {
		v := mv.view()
		d := MovementDump{Exists: mv.m != nil, Owners: []OwnerDump{}, Pods: []string{}}
		if mv.m != nil {
			d.Creator = mv.m.Spec.Creator
		}
		for _, o := range v.Owners {
			od := OwnerDump{Owner: ownerKey(o.Owner).String(), Nodes: []NodeDump{}}
			for _, n := range o.Nodes {
				nd := NodeDump{Node: n.Node, Desired: n.Desired, Actual: []string{}}
				for _, t := range n.Actual {
					nd.Actual = append(nd.Actual, t.Namespace+"/"+t.Name)
				}
				od.Nodes = append(od.Nodes, nd)
			}
			d.Owners = append(d.Owners, od)
		}
		for key := range mv.pods {
			d.Pods = append(d.Pods, key.String())
		}
		out[name] = d
		return true
	})
	return out
}

// CheckInvariants implements stores.Store: every recorded pod consumed this movement and is
// on a node; the owner index lists exactly the owners of the movements' specs.
func (s *Store) CheckInvariants() []error {
	var errs []error
	if err := s.Untaken(); err != nil {
		errs = append(errs, err)
	}
	want := map[store.OwnerKey]map[string]struct{}{}
	s.movements.Range(func(name string, mv *movement) bool {
		for key, pod := range mv.pods {
			if got, ok := consumed(pod); !ok || got != name || store.PodKey(pod) != key {
				errs = append(errs, fmt.Errorf("movement %s: pod %s did not consume it", name, key))
			}
		}
		if mv.m == nil && len(mv.pods) == 0 {
			errs = append(errs, fmt.Errorf("movement %s: kept without object or pods", name))
		}
		if mv.m != nil {
			for _, o := range mv.m.Spec.Owners {
				k := ownerKey(o.Owner)
				if want[k] == nil {
					want[k] = map[string]struct{}{}
				}
				want[k][name] = struct{}{}
			}
		}
		return true
	})
	if len(want) != len(s.byOwner) {
		errs = append(errs, fmt.Errorf("owner index has %d owners, specs name %d", len(s.byOwner), len(want)))
	}
	for k, names := range want {
		for name := range names {
			if _, ok := s.byOwner[k][name]; !ok {
				errs = append(errs, fmt.Errorf("owner index misses %s -> %s", k, name))
			}
		}
	}
	return errs
}
