package e2e

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// ExpectedStores is what each of multicache's stores holds once it has the population
// (multicache_store_objects{store}): the PDB store counts budgets and workload owners
// (every ReplicaSet); the devices store counts slices, claims and classes.
func ExpectedStores(size Size) map[string]int {
	return map[string]int{
		"nodes":        size.Nodes,
		"pods":         size.Pods,
		"podgroups":    size.PodGroups(),
		"pdbs":         size.PDBs() + size.ReplicaSets(),
		"movements":    0,
		"reservations": size.Reservations(),
		"devices":      size.ResourceSlices() + size.Claims() + size.DeviceClasses(),
	}
}

// CheckStores reads multicache's store counts and returns those that differ from
// ExpectedStores, as "store: got N, want M".
func CheckStores(ctx context.Context, in *Instance, size Size) ([]string, error) {
	m, err := harness.Scrape(ctx, in.MetricsURL, "multicache_store_objects")
	if err != nil {
		return nil, err
	}
	var diffs []string
	for store, want := range ExpectedStores(size) {
		if got := count(m, fmt.Sprintf("multicache_store_objects{store=%q}", store)); got != want {
			diffs = append(diffs, fmt.Sprintf("%s: got %d, want %d", store, got, want))
		}
	}
	slices.Sort(diffs)
	return diffs, nil
}
