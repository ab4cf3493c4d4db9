package movementstore

import (
	"maps"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// SuggestionsIn answers as Store.SuggestionsFor did when snap was updated (a walk of the
// snapshot's movements).
func SuggestionsIn(snap *Snapshot, owner store.OwnerKey) map[string]int64 {
	return suggestions(owner, maps.Values(snap.Items()))
}
