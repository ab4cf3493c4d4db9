package chaos

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Markdown renders the results: the table per fault kind, the targets, the figures and
// every violation.
func (r *Results) Markdown() string {
	kinds := r.ByKind()
	violations := r.AllViolations()
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "### Chaos run of %s\n\n", r.Started.Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "Configuration: %s.\n\n", r.Config)
	known, nKnown, unknown := map[string]int{}, 0, 0
	for _, v := range violations {
		if v.Known != "" {
			known[v.Known] += v.Count
			nKnown += v.Count
		} else {
			unknown += v.Count
		}
	}
	fmt.Fprintf(&b, "Faults: %d in %v (after setup). Violations: %d new, %d instances of known defects (%s).\n\n",
		len(r.Faults), r.Took.Round(time.Second), unknown, nKnown, harness.Counts(known))
	b.WriteString("| fault | count | recovery to an empty comparison: min / median / max | takeover (max) | status settled after (max) | violations |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|\n")
	for _, k := range kinds {
		if k.Count == 0 {
			fmt.Fprintf(&b, "| %s | 0 | - | - | - | - |\n", k.Kind)
			continue
		}
		takeover := "-"
		if k.TakeoverMax > 0 {
			takeover = dur(k.TakeoverMax)
		}
		fmt.Fprintf(&b, "| %s | %d | %s / %s / %s | %s | %s | %s |\n", k.Kind, k.Count,
			dur(k.RecoveryMin), dur(k.RecoveryMedian), dur(k.RecoveryMax), takeover, dur(k.StatusMax), k.Violations)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "First start on the populated cluster (the leader writes every status): ready after %s, comparison empty after %s. "+
		"Cold start of the second replica on the settled cluster: ready (caught up) after %s, comparison empty after %s.\n\n",
		dur(r.FirstReady), dur(r.FirstFull), dur(r.ColdReady), dur(r.ColdFull))
	count := func(checks ...string) (all, unknown int) {
		for _, v := range violations {
			for _, c := range checks {
				if v.Check == c {
					all += v.Count
					if v.Known == "" {
						unknown += v.Count
					}
				}
			}
		}
		return all, unknown
	}
	kindsSeen := 0
	for _, k := range kinds {
		if k.Count > 0 {
			kindsSeen++
		}
	}
	fmt.Fprintf(&b, "- Target: at least the configured faults, every kind: %d faults, %d of %d kinds.\n", len(r.Faults), kindsSeen, len(kinds))
	lost, lostNew := count("compare", "not-ready")
	fmt.Fprintf(&b, "- Objects lost (a comparison not empty within the bound, a replica not ready): %d (%d not of a known defect).\n", lost, lostNew)
	double, doubleNew := count("charge", "double-consumption")
	fmt.Fprintf(&b, "- Double-charged (a node charged wrong, a pod holding two reservations): %d (%d not of a known defect).\n", double, doubleNew)
	falseStatus, falseNew := count("false-status", "fencing", "expectation", "status-convergence")
	fmt.Fprintf(&b, "- False or late status writes: %d (%d not of a known defect).\n", falseStatus, falseNew)
	for _, k := range kinds {
		switch k.Kind {
		case KillLeader.Kind:
			fmt.Fprintf(&b, "- Target: recovery after kill -9 of the leader <= cold start + 2 s (%s): max %s, %s.\n",
				dur(r.ColdFull+2*time.Second), dur(k.RecoveryMax), met(k.Count > 0 && k.RecoveryMax <= r.ColdFull+2*time.Second))
		case Compaction410.Kind:
			b.WriteString(relistTarget(r.Faults))
		}
	}
	b.WriteString(failoverSummary(r.Faults))
	fmt.Fprintf(&b, "- multicache_invariant_violations_total over every process: %v.\n", r.Invariants)
	fmt.Fprintf(&b, "- multicache_drift_total by kind over every process: %s.\n", harness.Counts(r.Drift))
	fmt.Fprintf(&b, "- Status writes and reservation deletes per replica: %s; by a replica that did not hold the lease: %d.\n",
		harness.Counts(r.Writes), r.LateWrites)
	fmt.Fprintf(&b, "- Checked: %s.\n", harness.Counts(r.Observed))
	fmt.Fprintf(&b, "- The suite's own reflectors relisted (after a 410 or a broken watch): %s.\n", harness.Counts(r.Relists))
	for _, bu := range r.Bursts {
		fmt.Fprintf(&b, "- Burst %s: %d reservations set to expire at %s.\n", bu.ID, bu.Count, bu.Expiry.Format("15:04:05"))
	}
	if len(r.Exits) > 0 {
		fmt.Fprintf(&b, "- Processes that exited on their own (restarted): %d:\n", len(r.Exits))
		for _, e := range r.Exits {
			fmt.Fprintf(&b, "  - %s\n", e)
		}
	}
	var ops []string
	total := 0
	for name, s := range r.Ops {
		ops = append(ops, fmt.Sprintf("%s %d/%d", name, s.OK, s.OK+s.Failed))
		total += s.OK
	}
	sort.Strings(ops)
	fmt.Fprintf(&b, "- Workload: %d operations succeeded (ok/tried: %s).\n", total, strings.Join(ops, ", "))
	b.WriteString("\nFaults in order:\n\n")
	for _, f := range r.Faults {
		fmt.Fprintf(&b, "%d. %s at %s: recovery %s; %s\n", f.Seq, f.Kind, f.At.Format("15:04:05"), dur(f.Recovery), strings.Join(f.Notes, "; "))
	}
	if len(violations) > 0 {
		b.WriteString("\nViolations:\n\n")
		for _, v := range violations {
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	return b.String()
}

func dur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// margin is how much later than the informers' relist the caches were equal; a fault whose
// informers had not relisted comes last.
func margin(f *FaultResult) time.Duration {
	if !f.floorSeen {
		return math.MinInt64
	}
	return f.cacheCorrectBy - f.floorRelist
}

// relistSlack is how much later than the bare informers' relist the operators' caches may
// be equal to the API after a 410.
const relistSlack = time.Second

// relistTarget judges every 410 against the floor measured in the same run: the operators'
// caches equal to the API (by the start of the comparison round that found them so) no
// later than the suite's bare informers of pods and nodes relisted, plus relistSlack. The
// informers back off as the operators' do (client-go's reflector, growing within
// backoffWindow), so a fault late in a window is judged against the same wait. A fault
// whose informers had not relisted by then meets it.
func relistTarget(faults []*FaultResult) string {
	n, metCount := 0, 0
	var worst *FaultResult
	for _, f := range faults {
		if f.Kind != Compaction410.Kind {
			continue
		}
		n++
		ok := !f.floorSeen || f.cacheCorrectBy <= f.floorRelist+relistSlack
		if ok {
			metCount++
		}
		if worst == nil || margin(f) > margin(worst) {
			worst = f
		}
	}
	if n == 0 {
		return "- Target: caches equal after a 410 <= the bare informers' relist + 1 s: no 410 injected, NOT met.\n"
	}
	floor := "had not relisted"
	if worst.floorSeen {
		floor = "relisted after " + dur(worst.floorRelist)
	}
	return fmt.Sprintf("- Target: caches equal after a 410 <= the bare informers' relist (pods, nodes) + 1 s, in this run: %d of %d, %s; worst: equal by %s, informers %s (fault #%d).\n",
		metCount, n, met(metCount == n), dur(worst.cacheCorrectBy), floor, worst.Seq)
}
