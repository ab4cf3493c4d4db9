package pdbstore

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/internal/testsupport/invariants"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestCheckInvariants_FindsEveryCorruption corrupts a healthy store one way at a time and
// expects the deferred check, finished after the state it copied changed back, to report
// it: what the check reads under the lock is what it judges.
func TestCheckInvariants_FindsEveryCorruption(t *testing.T) {
	web := store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}
	budget := types.NamespacedName{Namespace: "ns", Name: "web-pdb"}
	invariants.CheckCorruptions(t, func(t *testing.T) *Store {
		s := newStore(t)
		s.AddOwner(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web"))
		s.AddOwner(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "db", "app", "db"))
		s.AddPDB(ts.MakePDB("ns", "web-pdb", 1, "app", "web"))
		s.AddOwner(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "elsewhere", "api", "app", "api"))
		return s
	}, []invariants.Corruption[*Store]{
		{Name: "a link only the budget holds", Corrupt: func(s *Store) func() {
			o, _ := s.owners.Get(web)
			delete(o.pdbs, budget)
			return func() { o.pdbs[budget] = struct{}{} }
		}, Want: "pdb ns/web-pdb / owner ReplicaSet/ns/web: one-sided link"},
		{Name: "links both sides dropped while the selector matches", Corrupt: func(s *Store) func() {
			o, _ := s.owners.Get(web)
			e, _ := s.pdbs.Get(budget)
			delete(o.pdbs, budget)
			delete(e.owners, web)
			return func() { o.pdbs[budget] = struct{}{}; e.owners[web] = struct{}{} }
		}, Want: "linked=false but selector matches=true"},
		{Name: "a link to an unknown owner of another namespace", Corrupt: func(s *Store) func() {
			e, _ := s.pdbs.Get(budget)
			ghost := store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "elsewhere", Name: "ghost"}
			e.owners[ghost] = struct{}{}
			return func() { delete(e.owners, ghost) }
		}, Want: "linked to unknown owner ReplicaSet/elsewhere/ghost"},
		{Name: "a link to an owner of another namespace", Corrupt: func(s *Store) func() {
			e, _ := s.pdbs.Get(budget)
			elsewhere := store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "elsewhere", Name: "api"}
			e.owners[elsewhere] = struct{}{}
			return func() { delete(e.owners, elsewhere) }
		}, Want: "pdb ns/web-pdb: linked to owner ReplicaSet/elsewhere/api of another namespace"},
		{Name: "an owner filed under another namespace's index", Corrupt: func(s *Store) func() {
			o := s.ownersByNS["ns"][web]
			delete(s.ownersByNS["ns"], web)
			s.ownersByNS["elsewhere"][web] = o
			return func() { delete(s.ownersByNS["elsewhere"], web); s.ownersByNS["ns"][web] = o }
		}, Want: "owner ReplicaSet/ns/web: missing from its namespace index"},
		{Name: "another owner's entry filed under an owner's key", Corrupt: func(s *Store) func() {
			db := store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "db"}
			o := s.ownersByNS["ns"][db]
			s.ownersByNS["ns"][db] = s.ownersByNS["ns"][web]
			return func() { s.ownersByNS["ns"][db] = o }
		}, Want: "owner ReplicaSet/ns/db: missing from its namespace index", Unique: "missing from its namespace index"},
		{Name: "a budget missing from its namespace index", Corrupt: func(s *Store) func() {
			e := s.pdbsByNS["ns"][budget]
			delete(s.pdbsByNS["ns"], budget)
			return func() { s.pdbsByNS["ns"][budget] = e }
		}, Want: "pdb ns/web-pdb: missing from its namespace index"},
		{Name: "an owner missing from its namespace index", Corrupt: func(s *Store) func() {
			o := s.ownersByNS["ns"][web]
			delete(s.ownersByNS["ns"], web)
			return func() { s.ownersByNS["ns"][web] = o }
		}, Want: "owner ReplicaSet/ns/web: missing from its namespace index"},
	})
}

// TestCheckInvariants_FindsOneSidedLinksOfWideBudgets: a budget selecting a whole namespace
// links more owners than the check scans (it looks them up in a set), and an owner several
// such budgets select is looked up likewise; a link missing on either side is found.
func TestCheckInvariants_FindsOneSidedLinksOfWideBudgets(t *testing.T) {
	owner := store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "rs-07"}
	budget := types.NamespacedName{Namespace: "ns", Name: "all-03"}
	invariants.CheckCorruptions(t, func(t *testing.T) *Store {
		return wideBudgets(t, 40, 40)
	}, []invariants.Corruption[*Store]{
		{Name: "the owner's link back dropped", Corrupt: func(s *Store) func() {
			o, _ := s.owners.Get(owner)
			delete(o.pdbs, budget)
			return func() { o.pdbs[budget] = struct{}{} }
		}, Want: "pdb ns/all-03 / owner ReplicaSet/ns/rs-07: one-sided link", Unique: "one-sided"},
		{Name: "the budget's link dropped", Corrupt: func(s *Store) func() {
			e, _ := s.pdbs.Get(budget)
			delete(e.owners, owner)
			return func() { e.owners[owner] = struct{}{} }
		}, Want: "pdb ns/all-03 / owner ReplicaSet/ns/rs-07: linked=false but selector matches=true", Unique: "one-sided"},
	})
}
