package pdbstore

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
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
// the same namespace. Matching every budget against every owner of its namespace is the
// costly part (3,000 budgets and 15,000 ReplicaSets held the handler's lock for 0.4 s), and
// so were a copy of each entry's map and a lookup of each owner (10-13 ms): under the lock
// the entries, the owners' index and the links are copied into flat slices (selectors and
// owners are never mutated, only replaced); the matching and the owners' index check run
// in the function returned.
func (s *Store) CheckInvariantsDeferred() func() []error {
	type pdbCopy struct {
		key      types.NamespacedName
		selector labels.Selector
		from, to int // its owners in pdbOwners[from:to]
	}
	type ownerCopy struct {
		key      store.OwnerKey
		entry    *ownerEntry
		labels   map[string]string
		from, to int // its budgets in ownerPDBs[from:to]
		// linked are those budgets as a set, when there are many (built after the lock).
		linked map[types.NamespacedName]struct{}
	}
	var errs []error
	pdbs := make([]pdbCopy, 0, s.pdbs.Len())
	// Links are about as many as owners in a usual cluster: sized so, the slices rarely grow.
	links := 0
	if s.pdbs.Len() > 0 {
		links = s.owners.Len()
	}
	pdbOwners := make([]store.OwnerKey, 0, links)
	s.pdbs.Range(func(pk types.NamespacedName, e *pdbEntry) bool {
		c := pdbCopy{key: pk, selector: e.selector, from: len(pdbOwners)}
		for ownerKey := range e.owners {
			pdbOwners = append(pdbOwners, ownerKey)
			if ownerKey.Namespace != pk.Namespace {
				errs = append(errs, fmt.Errorf("pdb %s: linked to owner %s of another namespace", pk, ownerKey))
			}
			if _, found := s.owners.Get(ownerKey); !found {
				errs = append(errs, fmt.Errorf("pdb %s: linked to unknown owner %s", pk, ownerKey))
			}
		}
		c.to = len(pdbOwners)
		pdbs = append(pdbs, c)
		if s.pdbsByNS[pk.Namespace][pk] != e {
			errs = append(errs, fmt.Errorf("pdb %s: missing from its namespace index", pk))
		}
		return true
	})
	// ownersOf holds each namespace's owners: the matching reads them by namespace.
	ownersOf := make(map[string][]ownerCopy, len(s.ownersByNS))
	ownerPDBs := make([]types.NamespacedName, 0, links)
	for ns, byKey := range s.ownersByNS {
		of := make([]ownerCopy, 0, len(byKey))
		for key, o := range byKey {
			c := ownerCopy{key: key, entry: o, labels: o.owner.Labels, from: len(ownerPDBs)}
			for pk := range o.pdbs {
				ownerPDBs = append(ownerPDBs, pk)
			}
			c.to = len(ownerPDBs)
			of = append(of, c)
		}
		ownersOf[ns] = of
	}
	// held are the owners the store holds, checked against the index after the lock (a
	// lookup of each in the index held it 3 ms of 8).
	type heldOwner struct {
		key   store.OwnerKey
		entry *ownerEntry
	}
	held := make([]heldOwner, 0, s.owners.Len())
	s.owners.Range(func(ownerKey store.OwnerKey, o *ownerEntry) bool {
		held = append(held, heldOwner{ownerKey, o})
		return true
	})
	return func() []error {
		indexed := make(map[store.OwnerKey]*ownerEntry, len(held))
		for ns, of := range ownersOf {
			for _, o := range of {
				if o.key.Namespace == ns {
					indexed[o.key] = o.entry
				}
			}
		}
		for _, o := range held {
			if indexed[o.key] != o.entry {
				errs = append(errs, fmt.Errorf("owner %s: missing from its namespace index", o.key))
			}
		}
		// An entry links a few others, and a scan beats a set; a budget selecting a whole
		// namespace links thousands, and for those (and owners many budgets select) a set
		// is built once.
		const scanned = 32
		var pdbSet map[store.OwnerKey]struct{}
		for _, of := range ownersOf {
			for i, o := range of {
				if o.to-o.from > scanned {
					of[i].linked = setOf(ownerPDBs[o.from:o.to])
				}
			}
		}
		// The matching runs off the lock for tens of milliseconds: it yields (a verify pass
		// on two CPUs would otherwise keep one from the events until preempted).
		var y yield.Yielder
		for _, p := range pdbs {
			links := pdbOwners[p.from:p.to]
			if len(links) > scanned {
				pdbSet = setOf(links)
			}
			for _, o := range ownersOf[p.key.Namespace] {
				y.Step()
				var linked, back bool
				if len(links) > scanned {
					_, linked = pdbSet[o.key]
				} else {
					linked = slices.Contains(links, o.key)
				}
				if o.linked != nil {
					_, back = o.linked[p.key]
				} else {
					back = slices.Contains(ownerPDBs[o.from:o.to], p.key)
				}
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

// setOf is a set of keys.
func setOf[K comparable](keys []K) map[K]struct{} {
	set := make(map[K]struct{}, len(keys))
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return set
}
