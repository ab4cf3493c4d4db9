package pdbstore_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func newStore(t *testing.T) *pdbstore.Store {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return pdbstore.New(config)
}

func names(views []store.PDB) []string {
	var out []string
	for _, v := range views {
		out = append(out, v.Key.Name)
	}
	return out
}

func TestPDB_OwnerIndexLinksBudgetsToOwnersWhoseTemplatesTheySelect(t *testing.T) {
	s := newStore(t)
	web := ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web", "tier", "front")
	db := ts.MakeOwner(v1alpha1.OwnerStatefulSet, "ns", "db", "app", "db")
	s.AddOwner(web) // owners before budgets and after: both orders link
	s.AddPDB(ts.MakePDB("ns", "web-pdb", 1, "app", "web"))
	s.AddPDB(ts.MakePDB("ns", "front-pdb", 0, "tier", "front"))
	s.AddPDB(ts.MakePDB("other", "web-pdb", 1, "app", "web")) // another namespace never covers
	s.AddOwner(db)

	if got := names(s.ForOwner(web.Key())); len(got) != 2 || got[0] != "front-pdb" || got[1] != "web-pdb" {
		t.Errorf("budgets for web: %v, want [front-pdb web-pdb]", got)
	}
	if got := s.ForOwner(db.Key()); len(got) != 0 {
		t.Errorf("budgets for db: %v, want none", names(got))
	}
	pod := ts.MakePod("ns", "web-1", ts.OwnedBy("ReplicaSet", "web", string(web.UID)))
	if got := names(s.ForPod(pod)); len(got) != 2 {
		t.Errorf("budgets for a pod of web: %v", got)
	}
	if v, _ := s.Get(types.NamespacedName{Namespace: "ns", Name: "front-pdb"}); v.AllowedDisruptions != 0 {
		t.Errorf("allowed disruptions %d, want 0", v.AllowedDisruptions)
	}

	// The owner's template changes: links follow.
	s.UpdateOwner(web, ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web"))
	if got := names(s.ForOwner(web.Key())); len(got) != 1 || got[0] != "web-pdb" {
		t.Errorf("after relabelling: %v, want [web-pdb]", got)
	}
	// A budget's selector changes: links follow.
	s.UpdatePDB(ts.MakePDB("ns", "web-pdb", 1, "app", "web"), ts.MakePDB("ns", "web-pdb", 1, "app", "db"))
	if got := names(s.ForOwner(db.Key())); len(got) != 1 {
		t.Errorf("after reselecting: budgets for db %v", got)
	}
	s.DeletePDB(ts.MakePDB("ns", "web-pdb", 1, "app", "db"))
	s.DeleteOwner(db)
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestPDB_PodWithoutAKnownOwnerFallsBackToItsLabels(t *testing.T) {
	s := newStore(t)
	s.AddPDB(ts.MakePDB("ns", "web-pdb", 1, "app", "web"))
	bare := ts.MakePod("ns", "bare", ts.WithLabels("app", "web"))
	if got := names(s.ForPod(bare)); len(got) != 1 {
		t.Errorf("budgets for an unowned pod: %v, want [web-pdb]", got)
	}
	if got := s.ForPod(ts.MakePod("ns", "db", ts.WithLabels("app", "db"))); len(got) != 0 {
		t.Errorf("budgets for an unselected pod: %v", names(got))
	}
}

func TestPDB_BudgetWithoutSelectorCoversNothing(t *testing.T) {
	s := newStore(t)
	s.AddOwner(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web"))
	pdb := ts.MakePDB("ns", "empty", 1)
	pdb.Spec.Selector = nil
	s.AddPDB(pdb)
	if got := s.ForOwner(store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}); len(got) != 0 {
		t.Errorf("a budget without selector covers %v", names(got))
	}
}

func TestPDB_SelectorChangeFromNilToEmptyRelinks(t *testing.T) {
	s := newStore(t)
	owner := ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web", "app", "web")
	s.AddOwner(owner)
	none := ts.MakePDB("ns", "all", 1)
	none.Spec.Selector = nil // selects nothing
	s.AddPDB(none)
	all := ts.MakePDB("ns", "all", 1)
	all.Spec.Selector = &metav1.LabelSelector{} // selects everything
	s.UpdatePDB(none, all)
	if got := names(s.ForOwner(owner.Key())); len(got) != 1 {
		t.Errorf("after the selector became {}: budgets %v, want [all]", got)
	}
	s.UpdatePDB(all, none)
	if got := s.ForOwner(owner.Key()); len(got) != 0 {
		t.Errorf("after the selector became nil: budgets %v, want none", names(got))
	}
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}
