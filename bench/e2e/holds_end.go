package e2e

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// readHoldsEnd reads, after the last phase, multicache's reserve-on-delete counters, the
// replacement Reservations in the API, and multicache's comparison with the API.
func readHoldsEnd(ctx context.Context, c client.Client, mc *Instance, res *HoldsResult) error {
	const counter, violations = "multicache_reserve_on_delete_total", "multicache_invariant_violations_total"
	m, err := harness.Scrape(ctx, harness.FilterURL(mc.MetricsURL, counter, violations), counter, violations)
	if err != nil {
		return err
	}
	res.InvariantViolations = m[violations]
	res.Counters = map[string]float64{}
	for key, v := range m {
		if result, ok := strings.CutPrefix(key, counter+`{result="`); ok {
			res.Counters[strings.TrimSuffix(result, `"}`)] = v
		}
	}
	var rsvs v1alpha1.ReservationList
	if err := c.List(ctx, &rsvs, client.InNamespace(holdsNamespace)); err != nil {
		return err
	}
	res.Reservations = map[string]int{}
	for _, r := range rsvs.Items {
		if _, ok := r.Annotations[v1alpha1.ReplacesPodAnnotation]; ok {
			res.Reservations[string(r.Status.Phase)]++
		}
	}
	diffs, err := readCompare(ctx, mc, nil)
	if err != nil {
		return err
	}
	res.Compare = len(diffs)
	if len(diffs) > 0 {
		res.CompareFirst = string(diffs[0])
	}
	return nil
}

// loggedViolations returns up to n distinct invariant violations multicache's verify loop
// logged ("cache invariant violated", JSON lines).
func loggedViolations(logPath string, n int) []string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		var entry struct {
			Msg       string `json:"msg"`
			Violation string `json:"violation"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "cache invariant violated" || slices.Contains(out, entry.Violation) {
			continue
		}
		if out = append(out, entry.Violation); len(out) == n {
			break
		}
	}
	return out
}
