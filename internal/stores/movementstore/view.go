package movementstore

import (
	"iter"
	"sort"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// view derives the suggestions and the pods that consumed them, owner by owner.
func (mv *movement) view() store.Movement {
	v := store.Movement{Name: mv.name, Movement: mv.m}
	if mv.m == nil {
		return v
	}
	for _, o := range mv.m.Spec.Owners {
		sug := store.MovementOwner{Owner: o.Owner}
		at := map[string]int{}
		for _, rn := range o.RecommendedNodes {
			if i, dup := at[rn.Node]; dup {
				sug.Nodes[i].Desired += rn.DesiredPodCount
				continue
			}
			at[rn.Node] = len(sug.Nodes)
			sug.Nodes = append(sug.Nodes, store.MovementNode{Node: rn.Node, Desired: rn.DesiredPodCount})
		}
		firstUnsuggested := len(sug.Nodes)
		for key, pod := range mv.pods {
			owner, uid, isOwned := store.ControllerOwner(pod)
			if !isOwned || owner != ownerKey(o.Owner) || (o.Owner.UID != "" && o.Owner.UID != uid) {
				continue
			}
			i, seen := at[pod.Spec.NodeName]
			if !seen {
				i = len(sug.Nodes)
				at[pod.Spec.NodeName] = i
				sug.Nodes = append(sug.Nodes, store.MovementNode{Node: pod.Spec.NodeName})
			}
			sug.Nodes[i].Actual = append(sug.Nodes[i].Actual, v1alpha1.TaskInfo{
				Name: key.Name, Namespace: key.Namespace, UID: pod.UID, Node: pod.Spec.NodeName,
			})
		}
		extra := sug.Nodes[firstUnsuggested:]
		sort.Slice(extra, func(i, j int) bool { return extra[i].Node < extra[j].Node })
		for i := range sug.Nodes {
			actual := sug.Nodes[i].Actual
			sort.Slice(actual, func(a, b int) bool {
				return actual[a].Namespace+"/"+actual[a].Name < actual[b].Namespace+"/"+actual[b].Name
			})
		}
		v.Owners = append(v.Owners, sug)
	}
	return v
}

// Get returns what the cache derives for one movement.
func (s *Store) Get(name string) (store.Movement, bool) {
	mv, ok := s.movements.Get(name)
	if !ok {
		return store.Movement{}, false
	}
	return mv.view(), true
}

// SuggestionsFor returns, for an owner, how many more pods each node should receive, summed
// over every movement with suggestions for it. Nodes with nothing left are omitted.
func (s *Store) SuggestionsFor(owner store.OwnerKey) map[string]int64 {
	return suggestions(owner, func(yield func(store.Movement) bool) {
		for name := range s.byOwner[owner] {
			if mv, ok := s.movements.Get(name); ok && !yield(mv.view()) {
				return
			}
		}
	})
}

// suggestions is SuggestionsFor's sum over movements, for the live store and a snapshot
// alike.
func suggestions(owner store.OwnerKey, movements iter.Seq[store.Movement]) map[string]int64 {
	left := map[string]int64{}
	for mv := range movements {
		for _, sug := range mv.Owners {
			if ownerKey(sug.Owner) != owner {
				continue
			}
			for _, n := range sug.Nodes {
				if l := n.Left(); l > 0 {
					left[n.Node] += l
				}
			}
		}
	}
	return left
}
