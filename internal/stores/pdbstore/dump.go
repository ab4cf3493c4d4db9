package pdbstore

import (
	"fmt"
	"maps"

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

// CheckInvariantsDeferred implements stores.DeferredChecker: links are symmetric, and a
// budget is linked to an owner exactly when its selector matches the owner's labels in the
// same namespace. Matching every budget against every owner of its namespace is the costly
// part (3,000 budgets and 15,000 ReplicaSets held the handler's lock for 0.4 s): under the
// lock only the links are copied (selectors and owners are never mutated, only replaced),
// and the matching runs in the function returned.
func (s *Store) CheckInvariantsDeferred() func() []error {
	type pdbCopy struct {
		key      types.NamespacedName
		selector labels.Selector
		owners   map[stores.OwnerKey]struct{}
	}
	type ownerCopy struct {
		key    stores.OwnerKey
		labels map[string]string
		pdbs   map[types.NamespacedName]struct{}
	}
	var errs []error
	var pdbs []pdbCopy
	s.pdbs.Range(func(pk types.NamespacedName, e *pdbEntry) bool {
		pdbs = append(pdbs, pdbCopy{pk, e.selector, maps.Clone(e.owners)})
		for ownerKey := range e.owners {
			if ownerKey.Namespace != pk.Namespace {
				errs = append(errs, fmt.Errorf("pdb %s: linked to owner %s of another namespace", pk, ownerKey))
			}
			if _, found := s.owners.Get(ownerKey); !found {
				errs = append(errs, fmt.Errorf("pdb %s: linked to unknown owner %s", pk, ownerKey))
			}
		}
		if s.pdbsByNS[pk.Namespace][pk] != e {
			errs = append(errs, fmt.Errorf("pdb %s: missing from its namespace index", pk))
		}
		return true
	})
	ownersOf := make(map[string][]ownerCopy, len(s.ownersByNS))
	for ns, owners := range s.ownersByNS {
		for key, o := range owners {
			ownersOf[ns] = append(ownersOf[ns], ownerCopy{key, o.owner.Labels, maps.Clone(o.pdbs)})
		}
	}
	s.owners.Range(func(ownerKey stores.OwnerKey, o *ownerEntry) bool {
		if s.ownersByNS[ownerKey.Namespace][ownerKey] != o {
			errs = append(errs, fmt.Errorf("owner %s: missing from its namespace index", ownerKey))
		}
		return true
	})
	return func() []error {
		for _, p := range pdbs {
			for _, o := range ownersOf[p.key.Namespace] {
				_, linked := p.owners[o.key]
				_, back := o.pdbs[p.key]
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
