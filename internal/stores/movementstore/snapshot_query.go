package movementstore

import (
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// SuggestionsIn answers as Store.SuggestionsFor did when snap was updated: for an owner,
// how many more pods each node should receive, summed over every movement with
// suggestions for it (a walk of the snapshot's movements). Nodes with nothing left are
// omitted.
func SuggestionsIn(snap *Snapshot, owner store.OwnerKey) map[string]int64 {
	left := map[string]int64{}
	for _, mv := range snap.Items() {
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
