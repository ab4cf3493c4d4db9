package pdbstore

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PDBView is one budget and the owners it covers.
type PDBView struct {
	Key types.NamespacedName
	PDB *policyv1.PodDisruptionBudget
	// AllowedDisruptions is how many pods may be disrupted now (from the budget's status).
	AllowedDisruptions int32
	// Owners are the owners whose pods the budget covers, sorted.
	Owners []store.OwnerKey
}

func (e *pdbEntry) view() PDBView {
	v := PDBView{Key: e.key, PDB: e.pdb, AllowedDisruptions: e.pdb.Status.DisruptionsAllowed, Owners: make([]store.OwnerKey, 0, len(e.owners))}
	for k := range e.owners {
		v.Owners = append(v.Owners, k)
	}
	sort.Slice(v.Owners, func(i, j int) bool { return v.Owners[i].String() < v.Owners[j].String() })
	return v
}

// ForOwner returns the budgets that cover an owner's pods, sorted by key.
func (s *Store) ForOwner(key store.OwnerKey) []PDBView {
	o, ok := s.owners.Get(key)
	if !ok {
		return nil
	}
	out := make([]PDBView, 0, len(o.pdbs))
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
func (s *Store) ForPod(pod *corev1.Pod) []PDBView {
	if key, _, ok := store.ControllerOwner(pod); ok {
		if _, known := s.owners.Get(key); known {
			return s.ForOwner(key)
		}
	}
	var out []PDBView
	for _, e := range s.pdbsByNS[pod.Namespace] {
		if e.selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, e.view())
		}
	}
	sortViews(out)
	return out
}

// Get returns one budget.
func (s *Store) Get(key types.NamespacedName) (PDBView, bool) {
	e, ok := s.pdbs.Get(key)
	if !ok {
		return PDBView{}, false
	}
	return e.view(), true
}

func sortViews(v []PDBView) {
	sort.Slice(v, func(i, j int) bool { return v[i].Key.String() < v[j].Key.String() })
}
