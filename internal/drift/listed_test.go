package drift

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"k8s.io/apimachinery/pkg/types"
)

// TestKeyOrder_IsTheOrderOfTheAPIServersKeys: on namespaces one the prefix of another and
// names around "/" and "-", stores.CompareKeys orders as "namespace/name" compares byte by byte.
func TestKeyOrder_IsTheOrderOfTheAPIServersKeys(t *testing.T) {
	parts := []string{"", "a", "a-b", "ab", "a.b", "b", "a0", "A"}
	for _, ans := range parts[1:] {
		for _, an := range parts[1:] {
			for _, bns := range parts[1:] {
				for _, bn := range parts[1:] {
					a, b := types.NamespacedName{Namespace: ans, Name: an}, types.NamespacedName{Namespace: bns, Name: bn}
					if got, want := stores.CompareKeys(a, b), strings.Compare(ans+"/"+an, bns+"/"+bn); got != want {
						t.Errorf("stores.CompareKeys(%v, %v) = %d, want %d", a, b, got, want)
					}
				}
			}
		}
	}
	for _, a := range parts[1:] {
		for _, b := range parts[1:] {
			if got, want := stores.CompareKeys(types.NamespacedName{Name: a}, types.NamespacedName{Name: b}), strings.Compare(a, b); got != want {
				t.Errorf("CompareKeys of cluster-scoped %q, %q = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestListedNames_FindsWhatWasListedInAnyOrder: names listed in the API server's order are
// searched as they are, names listed shuffled are sorted once; either way every listed name
// is found, under its owner type only, and no other.
func TestListedNames_FindsWhatWasListedInAnyOrder(t *testing.T) {
	var names []types.NamespacedName
	for i := range 3000 {
		names = append(names, types.NamespacedName{Namespace: []string{"a", "a-b", "ab"}[i%3], Name: fmt.Sprintf("p%03d", i)})
	}
	sorted := append([]types.NamespacedName(nil), names...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && stores.CompareKeys(sorted[j-1], sorted[j]) > 0; j-- {
			sorted[j-1], sorted[j] = sorted[j], sorted[j-1]
		}
	}
	shuffled := append([]types.NamespacedName(nil), names...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range []struct {
		name         string
		order        []types.NamespacedName
		wantUnsorted bool
	}{{"in key order", sorted, false}, {"shuffled", shuffled, true}} {
		var l listedNames
		for _, n := range c.order[:2500] {
			l.add("ReplicaSet", n)
		}
		if l.byType["ReplicaSet"].unsorted != c.wantUnsorted {
			t.Errorf("%s: unsorted %v", c.name, l.byType["ReplicaSet"].unsorted)
		}
		for i, n := range c.order {
			if got, want := l.has("ReplicaSet", n), i < 2500; got != want {
				t.Errorf("%s: has(%v) = %v, want %v", c.name, n, got, want)
			}
			if l.has("", n) || l.has("Deployment", n) {
				t.Errorf("%s: %v found under another owner type", c.name, n)
			}
		}
	}
}
