package pdbstore

import (
	"fmt"

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

// CheckInvariants implements stores.Store: links are symmetric, and a budget is linked to
// an owner exactly when its selector matches the owner's labels in the same namespace.
func (s *Store) CheckInvariants() []error {
	var errs []error
	s.pdbs.Range(func(pk types.NamespacedName, e *pdbEntry) bool {
		for _, o := range s.ownersByNS[pk.Namespace] {
			ownerKey := o.owner.Key()
			_, linked := e.owners[ownerKey]
			_, back := o.pdbs[pk]
			if linked != back {
				errs = append(errs, fmt.Errorf("pdb %s / owner %s: one-sided link", pk, ownerKey))
			}
			if matches := e.selector.Matches(labels.Set(o.owner.Labels)); matches != linked {
				errs = append(errs, fmt.Errorf("pdb %s / owner %s: linked=%v but selector matches=%v", pk, ownerKey, linked, matches))
			}
		}
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
	s.owners.Range(func(ownerKey stores.OwnerKey, o *ownerEntry) bool {
		if s.ownersByNS[ownerKey.Namespace][ownerKey] != o {
			errs = append(errs, fmt.Errorf("owner %s: missing from its namespace index", ownerKey))
		}
		return true
	})
	return errs
}
