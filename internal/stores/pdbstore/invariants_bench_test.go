package pdbstore

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkCheckInvariants_WideBudgets checks a namespace of 5,000 ReplicaSets that 20
// budgets with an empty selector (every owner) all cover: each budget links every owner and
// each owner every budget, the case a scan of an entry's links would make quadratic. Run:
// go test -run '^$' -bench BenchmarkCheckInvariants_WideBudgets -benchmem ./internal/stores/pdbstore
func BenchmarkCheckInvariants_WideBudgets(b *testing.B) {
	s := wideBudgets(b, 5000, 20)
	for b.Loop() {
		if errs := s.CheckInvariants(); len(errs) > 0 {
			b.Fatal(errs[0])
		}
	}
}

// newStore is an empty store (the package's own tests read its fields).
func newStore(t testing.TB) *Store {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return New(config)
}

// wideBudgets is a store with owners ReplicaSets rs-NN of namespace ns and budgets all-NN
// there, each with an empty selector: every budget covers every owner.
func wideBudgets(t testing.TB, owners, budgets int) *Store {
	t.Helper()
	s := newStore(t)
	for i := range owners {
		s.AddOwner(ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", fmt.Sprintf("rs-%02d", i), "app", fmt.Sprint(i)))
	}
	for i := range budgets {
		pdb := ts.MakePDB("ns", fmt.Sprintf("all-%02d", i), 1)
		pdb.Spec.Selector = &metav1.LabelSelector{}
		s.AddPDB(pdb)
	}
	return s
}
