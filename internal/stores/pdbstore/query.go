package pdbstore

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func (e *pdbEntry) view() store.PDB {
	v := store.PDB{Key: e.key, PDB: e.pdb, AllowedDisruptions: e.pdb.Status.DisruptionsAllowed, Owners: make([]store.OwnerKey, 0, len(e.owners))}
	for k := range e.owners {
		v.Owners = append(v.Owners, k)
	}
	sort.Slice(v.Owners, func(i, j int) bool { return v.Owners[i].String() < v.Owners[j].String() })
	return v
}

// ForOwner returns the budgets that cover an owner's pods, sorted by key.
func (s *Store) ForOwner(key store.OwnerKey) []store.PDB {
	o, ok := s.owners.Get(key)
	if !ok {
		return nil
	}
	out := make([]store.PDB, 0, len(o.pdbs))
	for pk := range o.pdbs {
		if e, found := s.pdbs.Get(pk); found {
			out = append(out, e.view())
		}
	}
	sortViews(out)
	return out
}

// ForPod returns the budgets that cover a pod: through its controlling owner when the store
// knows it, otherwise by matching the pod's labels against the budgets of its namespace.
func (s *Store) ForPod(pod *corev1.Pod) []store.PDB {
	if key, _, ok := store.ControllerOwner(pod); ok {
		if _, known := s.owners.Get(key); known {
			return s.ForOwner(key)
		}
	}
	var out []store.PDB
	for _, e := range s.pdbsByNS[pod.Namespace] {
		if e.selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, e.view())
		}
	}
	sortViews(out)
	return out
}

// Get returns one budget.
func (s *Store) Get(key types.NamespacedName) (store.PDB, bool) {
	e, ok := s.pdbs.Get(key)
	if !ok {
		return store.PDB{}, false
	}
	return e.view(), true
}

func sortViews(v []store.PDB) {
	sort.Slice(v, func(i, j int) bool { return v[i].Key.String() < v[j].Key.String() })
}
