package pdbstore

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// PDBDump is the debug view of one budget.
type PDBDump struct {
	AllowedDisruptions int32    `json:"allowedDisruptions"`
	Selector           string   `json:"selector"`
	Owners             []string `json:"owners"`
}

// Dump implements stores.Store: PDBDump by namespace/name.
func (s *Store) Dump() any {
	out := map[string]PDBDump{}
	s.pdbs.Range(func(key types.NamespacedName, e *pdbEntry) bool {
		v := e.view()
		d := PDBDump{AllowedDisruptions: v.AllowedDisruptions, Selector: e.selector.String(), Owners: make([]string, 0, len(v.Owners))}
		for _, o := range v.Owners {
			d.Owners = append(d.Owners, o.String())
		}
		out[key.String()] = d
		return true
	})
	return out
}

// CheckInvariants implements stores.Store: CheckInvariantsDeferred, finished at once.
func (s *Store) CheckInvariants() []error { return s.CheckInvariantsDeferred()() }

// CheckInvariantsDeferred implements stores.DeferredChecker: links are symmetric, point at
// known owners of the budget's namespace, budgets and owners are in their namespace indexes,
// and a budget is linked to an owner exactly when its selector matches the owner's labels in
// the same namespace. Under the lock the entries and their links are only copied into flat
// slices (selectors and owners are never mutated, only replaced): matching every budget
// against every owner of its namespace held the lock for 0.4 s at 3,000 budgets and 15,000
// ReplicaSets, and a copy of each entry's map, with a lookup per link, still 11 ms. The
// function returned checks the copies.
func (s *Store) CheckInvariantsDeferred() func() []error {
	type pdbCopy struct {
		key      types.NamespacedName
		entry    *pdbEntry
		selector labels.Selector
		from, to int // its owners in pdbOwners[from:to]
	}
	type ownerCopy struct {
		key      stores.OwnerKey
		entry    *ownerEntry
		labels   map[string]string
		from, to int // its budgets in ownerPDBs[from:to]
	}
	pdbs := make([]pdbCopy, 0, s.pdbs.Len())
	var pdbOwners []stores.OwnerKey
	s.pdbs.Range(func(pk types.NamespacedName, e *pdbEntry) bool {
		c := pdbCopy{key: pk, entry: e, selector: e.selector, from: len(pdbOwners)}
		for ownerKey := range e.owners {
			pdbOwners = append(pdbOwners, ownerKey)
		}
		c.to = len(pdbOwners)
		pdbs = append(pdbs, c)
		return true
	})
	pdbIndex := make([]pdbCopy, 0, len(pdbs))
	for _, byKey := range s.pdbsByNS {
		for pk, e := range byKey {
			pdbIndex = append(pdbIndex, pdbCopy{key: pk, entry: e})
		}
	}
	// owners are the namespace index's; ownerEntries what s.owners holds.
	owners := make([]ownerCopy, 0, s.owners.Len())
	var ownerPDBs []types.NamespacedName
	for _, byKey := range s.ownersByNS {
		for key, o := range byKey {
			c := ownerCopy{key: key, entry: o, labels: o.owner.Labels, from: len(ownerPDBs)}
			for pk := range o.pdbs {
				ownerPDBs = append(ownerPDBs, pk)
			}
			c.to = len(ownerPDBs)
			owners = append(owners, c)
		}
	}
	ownerEntries := make([]ownerCopy, 0, s.owners.Len())
	s.owners.Range(func(key stores.OwnerKey, o *ownerEntry) bool {
		ownerEntries = append(ownerEntries, ownerCopy{key: key, entry: o})
		return true
	})
	return func() []error {
		var errs []error
		indexedPDB := make(map[types.NamespacedName]*pdbEntry, len(pdbIndex))
		for _, p := range pdbIndex {
			indexedPDB[p.key] = p.entry
		}
		indexedOwner := make(map[stores.OwnerKey]*ownerEntry, len(owners))
		ownersOf := make(map[string][]ownerCopy)
		for _, o := range owners {
			indexedOwner[o.key] = o.entry
			ownersOf[o.key.Namespace] = append(ownersOf[o.key.Namespace], o)
		}
		known := make(map[stores.OwnerKey]bool, len(ownerEntries))
		for _, o := range ownerEntries {
			known[o.key] = true
			if indexedOwner[o.key] != o.entry {
				errs = append(errs, fmt.Errorf("owner %s: missing from its namespace index", o.key))
			}
		}
		for _, p := range pdbs {
			if indexedPDB[p.key] != p.entry {
				errs = append(errs, fmt.Errorf("pdb %s: missing from its namespace index", p.key))
			}
			for _, ownerKey := range pdbOwners[p.from:p.to] {
				if ownerKey.Namespace != p.key.Namespace {
					errs = append(errs, fmt.Errorf("pdb %s: linked to owner %s of another namespace", p.key, ownerKey))
				}
				if !known[ownerKey] {
					errs = append(errs, fmt.Errorf("pdb %s: linked to unknown owner %s", p.key, ownerKey))
				}
			}
			for _, o := range ownersOf[p.key.Namespace] {
				// An entry links a few others: a scan beats a set.
				linked := slices.Contains(pdbOwners[p.from:p.to], o.key)
				back := slices.Contains(ownerPDBs[o.from:o.to], p.key)
				if linked != back {
					errs = append(errs, fmt.Errorf("pdb %s / owner %s: one-sided link", p.key, o.key))
				}
				if matches := p.selector.Matches(labels.Set(o.labels)); matches != linked {
					errs = append(errs, fmt.Errorf("pdb %s / owner %s: linked=%v but selector matches=%v", p.key, o.key, linked, matches))
				}
			}
		}
		return errs
	}
}
