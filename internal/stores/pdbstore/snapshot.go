package pdbstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot is a copy of the budgets and of the owner index.
type Snapshot struct {
	pdbs   map[types.NamespacedName]PDBView
	owners map[stores.OwnerKey][]types.NamespacedName
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PDBStoreName }

// Get returns one budget.
func (s *Snapshot) Get(key types.NamespacedName) (PDBView, bool) {
	v, ok := s.pdbs[key]
	return v, ok
}

// ForOwner returns the budgets that covered an owner's pods.
func (s *Snapshot) ForOwner(key stores.OwnerKey) []PDBView {
	var out []PDBView
	for _, pk := range s.owners[key] {
		if v, ok := s.pdbs[pk]; ok {
			out = append(out, v)
		}
	}
	sortViews(out)
	return out
}

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return &Snapshot{pdbs: map[types.NamespacedName]PDBView{}, owners: map[stores.OwnerKey][]types.NamespacedName{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	ps := snap.(*Snapshot)
	stores.Sync(s.pdbs, ps.pdbs, since, func(_ PDBView, e *pdbEntry) PDBView { return e.view() }, nil)
	stores.Sync(s.owners, ps.owners, since, func(_ []types.NamespacedName, o *ownerEntry) []types.NamespacedName {
		keys := make([]types.NamespacedName, 0, len(o.pdbs))
		for k := range o.pdbs {
			keys = append(keys, k)
		}
		return keys
	}, nil)
}
