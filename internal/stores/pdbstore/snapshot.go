package pdbstore

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of the budgets (with their selectors) and of the owner index.
type Snapshot struct {
	pdbs   map[types.NamespacedName]snapPDB
	owners map[store.OwnerKey][]types.NamespacedName
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PDBStoreName }

// Get returns one budget.
func (s *Snapshot) Get(key types.NamespacedName) (store.PDB, bool) {
	v, ok := s.pdbs[key]
	return v.view, ok
}

// snapPDB is a budget's view and the selector ForPod matches pods with.
type snapPDB struct {
	view     store.PDB
	selector labels.Selector
}

// ForPod answers as Store.ForPod did when the snapshot was updated: through the pod's
// controlling owner when the snapshot knows it, otherwise by matching the pod's labels
// against the budgets of its namespace (a walk of every budget).
func (s *Snapshot) ForPod(pod *corev1.Pod) []store.PDB {
	if key, _, ok := store.ControllerOwner(pod); ok {
		if _, known := s.owners[key]; known {
			return s.ForOwner(key)
		}
	}
	var out []store.PDB
	for k, v := range s.pdbs {
		if k.Namespace == pod.Namespace && v.selector != nil && v.selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, v.view)
		}
	}
	sortViews(out)
	return out
}

// ForOwner returns the budgets that covered an owner's pods.
func (s *Snapshot) ForOwner(key store.OwnerKey) []store.PDB {
	var out []store.PDB
	for _, pk := range s.owners[key] {
		if v, ok := s.pdbs[pk]; ok {
			out = append(out, v.view)
		}
	}
	sortViews(out)
	return out
}

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return &Snapshot{pdbs: map[types.NamespacedName]snapPDB{}, owners: map[store.OwnerKey][]types.NamespacedName{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ps := snap.(*Snapshot)
	store.Sync(s.pdbs, ps.pdbs, since, func(_ snapPDB, e *pdbEntry) snapPDB {
		return snapPDB{view: e.view(), selector: e.selector}
	}, nil)
	store.Sync(s.owners, ps.owners, since, func(_ []types.NamespacedName, o *ownerEntry) []types.NamespacedName {
		keys := make([]types.NamespacedName, 0, len(o.pdbs))
		for k := range o.pdbs {
			keys = append(keys, k)
		}
		return keys
	}, nil)
}
