// Package pdbstore keeps PodDisruptionBudgets and an index from workload owners (ReplicaSet,
// StatefulSet, DaemonSet, Deployment) to the budgets that cover their pods, so that "which
// budgets cover this pod" is a lookup, not a selector scan of every budget.
//
// A budget covers an owner when its selector matches the labels of the owner's pod template.
// Links are computed when a budget or an owner changes, scanning only its namespace.
package pdbstore

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

type pdbEntry struct {
	key      types.NamespacedName
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector
	owners   map[store.OwnerKey]struct{}
}

type ownerEntry struct {
	owner *store.Owner
	pdbs  map[types.NamespacedName]struct{}
}

// Store is the PDBStore.
type Store struct {
	h      *stores.CacheHandler
	pdbs   *store.Versioned[types.NamespacedName, *pdbEntry]
	owners *store.Versioned[store.OwnerKey, *ownerEntry]
	// Per-namespace indexes bound the scans of linking to one namespace.
	pdbsByNS   map[string]map[types.NamespacedName]*pdbEntry
	ownersByNS map[string]map[store.OwnerKey]*ownerEntry
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.DeferredChecker = (*Store)(nil)
	_ store.PDBHandler      = (*Store)(nil)
	_ store.OwnerHandler    = (*Store)(nil)
)

// New returns an empty PDBStore.
func New(h *stores.CacheHandler) *Store {
	return &Store{
		h:          h,
		pdbs:       store.NewVersioned[types.NamespacedName, *pdbEntry](h.Generations()),
		owners:     store.NewVersioned[store.OwnerKey, *ownerEntry](h.Generations()),
		pdbsByNS:   map[string]map[types.NamespacedName]*pdbEntry{},
		ownersByNS: map[string]map[store.OwnerKey]*ownerEntry{},
	}
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.PDBStoreName }

// Len implements stores.Store: budgets plus owners.
func (s *Store) Len() int { return s.pdbs.Len() + s.owners.Len() }

// selectorOf parses a budget's selector. A budget with no selector or a malformed one
// selects nothing, as the disruption controller treats it.
func selectorOf(pdb *policyv1.PodDisruptionBudget) labels.Selector {
	if pdb.Spec.Selector == nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// AddPDB adds a budget and links it to the owners of its namespace it covers.
func (s *Store) AddPDB(pdb *policyv1.PodDisruptionBudget) {
	key := types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}
	e := &pdbEntry{key: key, pdb: pdb, selector: selectorOf(pdb), owners: map[store.OwnerKey]struct{}{}}
	s.pdbs.Set(key, e)
	if s.pdbsByNS[pdb.Namespace] == nil {
		s.pdbsByNS[pdb.Namespace] = map[types.NamespacedName]*pdbEntry{}
	}
	s.pdbsByNS[pdb.Namespace][key] = e
	for _, o := range s.ownersByNS[pdb.Namespace] {
		if e.selector.Matches(labels.Set(o.owner.Labels)) {
			s.link(e, o)
		}
	}
}

// UpdatePDB replaces a budget; links are recomputed only when its selector changed. (The
// selectors are compared as written: nil and {} render alike but select nothing and
// everything.)
func (s *Store) UpdatePDB(oldPDB, newPDB *policyv1.PodDisruptionBudget) {
	key := types.NamespacedName{Namespace: newPDB.Namespace, Name: newPDB.Name}
	e, ok := s.pdbs.Get(key)
	if !ok || !equality.Semantic.DeepEqual(oldPDB.Spec.Selector, newPDB.Spec.Selector) {
		s.DeletePDB(oldPDB)
		s.AddPDB(newPDB)
		return
	}
	e.pdb = newPDB
	s.pdbs.Touch(key)
}

// DeletePDB removes a budget and its links.
func (s *Store) DeletePDB(pdb *policyv1.PodDisruptionBudget) {
	key := types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}
	e, ok := s.pdbs.Get(key)
	if !ok {
		return
	}
	for ownerKey := range e.owners {
		if o, found := s.owners.Get(ownerKey); found {
			delete(o.pdbs, key)
			s.owners.Touch(ownerKey)
		}
	}
	s.pdbs.Delete(key)
	delete(s.pdbsByNS[pdb.Namespace], key)
	if len(s.pdbsByNS[pdb.Namespace]) == 0 {
		delete(s.pdbsByNS, pdb.Namespace)
	}
}

// AddOwner adds an owner and links it to the budgets of its namespace that cover it.
func (s *Store) AddOwner(owner *store.Owner) {
	key := owner.Key()
	o := &ownerEntry{owner: owner, pdbs: map[types.NamespacedName]struct{}{}}
	s.owners.Set(key, o)
	if s.ownersByNS[owner.Namespace] == nil {
		s.ownersByNS[owner.Namespace] = map[store.OwnerKey]*ownerEntry{}
	}
	s.ownersByNS[owner.Namespace][key] = o
	for _, e := range s.pdbsByNS[owner.Namespace] {
		if e.selector.Matches(labels.Set(owner.Labels)) {
			s.link(e, o)
		}
	}
}

// UpdateOwner replaces an owner; links are recomputed only when its labels changed.
func (s *Store) UpdateOwner(oldOwner, newOwner *store.Owner) {
	o, ok := s.owners.Get(newOwner.Key())
	if !ok || !labels.Equals(oldOwner.Labels, newOwner.Labels) {
		s.DeleteOwner(oldOwner)
		s.AddOwner(newOwner)
		return
	}
	o.owner = newOwner
	s.owners.Touch(newOwner.Key())
}

// DeleteOwner removes an owner and its links.
func (s *Store) DeleteOwner(owner *store.Owner) {
	key := owner.Key()
	o, ok := s.owners.Get(key)
	if !ok {
		return
	}
	for pk := range o.pdbs {
		if e, found := s.pdbs.Get(pk); found {
			delete(e.owners, key)
			s.pdbs.Touch(pk)
		}
	}
	s.owners.Delete(key)
	delete(s.ownersByNS[owner.Namespace], key)
	if len(s.ownersByNS[owner.Namespace]) == 0 {
		delete(s.ownersByNS, owner.Namespace)
	}
}

func (s *Store) link(e *pdbEntry, o *ownerEntry) {
	ownerKey := o.owner.Key()
	e.owners[ownerKey] = struct{}{}
	o.pdbs[e.key] = struct{}{}
	s.pdbs.Touch(e.key)
	s.owners.Touch(ownerKey)
}
