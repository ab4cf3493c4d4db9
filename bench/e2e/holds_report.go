package e2e

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// HoldsGoneWithin is the run's bound: no hold is charged this long after the last
// replacement landed or the scale-down finished.
const HoldsGoneWithin = 2 * time.Second

// HoldsSummary is one phase of the run (its change and the settling after it), from its
// samples.
type HoldsSummary struct {
	Phase HoldsPhase
	// Samples in the phase; WithExcess those with a positive excess on some node.
	Samples, WithExcess int
	// MaxNode is the node account with the largest excess; MaxCluster the largest sum of
	// excesses over the nodes at one sample, and the legit charge of the cluster then.
	MaxNode                     NodeAccount
	MaxCluster, MaxClusterLegit int64
	MaxHolds, MaxStale          int
	// HoldsGone is the time from the phase's end to the first sample from which no hold was
	// charged until the phase's last sample (0 when none was charged after the end);
	// Lingering is false when the last sample still charged holds.
	HoldsGone time.Duration
	Lingering bool
	// HoldsAfterBound is the largest number of holds charged at a sample more than
	// HoldsGoneWithin after the end.
	HoldsAfterBound int
	// LastSample is the time from the end to the phase's last sample.
	LastSample time.Duration
}

// SummariseHolds summarises each phase from its samples (Phase is the phase's name, or
// settle-<name> after its change completed).
func SummariseHolds(res *HoldsResult) []HoldsSummary {
	var out []HoldsSummary
	for _, ph := range res.Phases {
		s := HoldsSummary{Phase: ph}
		var lastHeld time.Time
		for _, smp := range res.Samples {
			if smp.Phase != ph.Name && smp.Phase != "settle-"+ph.Name {
				continue
			}
			s.Samples++
			if smp.Excess > 0 {
				s.WithExcess++
			}
			if smp.Worst.Excess > s.MaxNode.Excess || s.Samples == 1 {
				s.MaxNode = smp.Worst
			}
			if smp.Excess > s.MaxCluster {
				s.MaxCluster, s.MaxClusterLegit = smp.Excess, smp.Legit
			}
			s.MaxHolds = max(s.MaxHolds, smp.Holds)
			s.MaxStale = max(s.MaxStale, smp.Stale)
			if !ph.End.IsZero() && smp.At.After(ph.End) {
				s.LastSample = smp.At.Sub(ph.End)
				if smp.Holds > 0 {
					lastHeld = smp.At
				}
				if smp.At.Sub(ph.End) > HoldsGoneWithin {
					s.HoldsAfterBound = max(s.HoldsAfterBound, smp.Holds)
				}
				s.Lingering = smp.Holds > 0
			}
		}
		if !lastHeld.IsZero() {
			// Gone at the sample after the last one that still charged a hold: bounded
			// above by that sample, below by lastHeld.
			s.HoldsGone = lastHeld.Sub(ph.End)
			for _, smp := range res.Samples {
				if smp.At.After(lastHeld) {
					s.HoldsGone = smp.At.Sub(ph.End)
					break
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// Problems lists what the run's checks do not allow: a sample with an excess, a
// hold charged HoldsGoneWithin after a phase's end, a phase sampled less than that after
// its end, failed samples, differences between multicache and the API at the end.
func (r *HoldsResult) Problems() []string {
	var p []string
	for _, s := range SummariseHolds(r) {
		if s.WithExcess > 0 {
			p = append(p, fmt.Sprintf("%s: %d of %d samples charged more than the live pods and the holds still awaited (at most %dm on %s: unjustified holds %v)",
				s.Phase.Name, s.WithExcess, s.Samples, s.MaxNode.Excess, s.MaxNode.Node, s.MaxNode.Unjustified))
		}
		if s.HoldsAfterBound > 0 || s.Lingering {
			p = append(p, fmt.Sprintf("%s: %d holds still charged more than %v after its end", s.Phase.Name, s.HoldsAfterBound, HoldsGoneWithin))
		}
		if s.LastSample <= HoldsGoneWithin {
			p = append(p, fmt.Sprintf("%s: sampled only %v after its end (the bound is %v)", s.Phase.Name, s.LastSample, HoldsGoneWithin))
		}
	}
	if r.SampleErrors > 0 {
		p = append(p, fmt.Sprintf("%d samples failed, the last: %v", r.SampleErrors, r.LastSampleErr))
	}
	if r.Compare > 0 {
		p = append(p, fmt.Sprintf("/debug/cache/compare at the end: %d differences, e.g. %s", r.Compare, r.CompareFirst))
	}
	if r.InvariantViolations > 0 {
		p = append(p, fmt.Sprintf("multicache's own invariant check found %.0f violations, e.g. %q", r.InvariantViolations, r.Violations))
	}
	if held, ended := r.HoldResults(); ended != held {
		p = append(p, fmt.Sprintf("multicache_reserve_on_delete_total: %.0f holds placed, %.0f results counted (consumed, expired, released_scale_down): each hold's result is to be counted once", held, ended))
	}
	return p
}

// HoldResults returns the holds multicache placed (held) and the results it counted for
// them (consumed, expired, released_scale_down); once every hold ended, the two are equal.
func (r *HoldsResult) HoldResults() (held, ended float64) {
	return r.Counters["held"], r.Counters["consumed"] + r.Counters["expired"] + r.Counters["released_scale_down"]
}

// WriteHoldsReport writes the markdown report of a run.
func WriteHoldsReport(w io.Writer, res *HoldsResult, machine string) {
	cfg := res.Config
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pf("## Reserve-on-delete end to end (`make bench-holds`)\n\n")
	pf("%s. %d nodes; a Deployment of %d pods (%s CPU, %s each, every pod annotated `multicache.dev/reserve-on-delete`) rolled with maxSurge %s, maxUnavailable %s, then scaled to %d",
		machine, cfg.Nodes, cfg.Replicas, cfg.PodCPU, cfg.PodMemory, cfg.MaxSurge, cfg.MaxUnavailable, cfg.ScaleTo)
	if cfg.Evict > 0 {
		pf(", then %d of its pods force-deleted at once (grace period 0; their replacements are due)", cfg.Evict)
	}
	pf(". ")
	pf("multicache %s. ", strings.Join(append([]string{"with"}, cfg.MulticacheArgs...), " "))
	pf("kube-apiserver, etcd, kube-scheduler and kube-controller-manager (deployment and replicaset controllers, %d requests/s) v1.37.1; no kubelet: the harness reports bound pods Running and Ready and removes a deleted pod %v after its deletionTimestamp. ",
		cfg.ControllerQPS, cfg.DeleteDelay)
	medianSpan := time.Duration(0)
	if len(res.Samples) > 0 {
		medianSpan = median(res.Samples, func(s HoldSample) time.Duration { return s.Span })
	}
	pf("multicache's nodes sampled every %v (%d samples; one sample, two API lists around the read of %d nodes, took %v at the median). The Deployment was available after %.1fs; the run took %.0fs.\n\n",
		cfg.SamplePeriod, len(res.Samples), cfg.Nodes, medianSpan.Round(time.Millisecond), res.Created.Seconds(), res.Duration.Seconds())

	pf("| phase | took | samples | with excess | max excess, one node | max excess, cluster | max holds charged | max stale pods | holds gone after the end |\n")
	pf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range SummariseHolds(res) {
		gone := fmt.Sprintf("%.1fs", s.HoldsGone.Seconds())
		switch {
		case s.MaxHolds == 0:
			gone = "none charged"
		case s.Lingering:
			gone = fmt.Sprintf("still charged %.1fs after", s.LastSample.Seconds())
		case s.HoldsGone == 0:
			gone = "none after the end"
		}
		pf("| %s | %.1fs | %d | %d | %s | %s | %d | %d | %s |\n",
			s.Phase.Name, s.Phase.End.Sub(s.Phase.Start).Seconds(), s.Samples, s.WithExcess,
			excess(s.MaxNode.Excess, s.MaxNode.Legit(), s.MaxNode.Node), excess(s.MaxCluster, s.MaxClusterLegit, ""),
			s.MaxHolds, s.MaxStale, gone)
	}
	pf("\nA phase is its change of the Deployment and %v of sampling after it ended (the last pod landed or was removed, by the harness's kubelets). ", cfg.Settle)
	pf("Excess is multicache's requested CPU on a node above the pods bound there in either of the two API lists around the read, the pods it still charges that the API had deleted before the first list (its feed's lag, the stale pods), and the holds it charges whose ReplicaSet had fewer landed pods than it wants (for a Deployment's ReplicaSet: whose Deployment's newest ReplicaSet had fewer than the Deployment wants) in either list or in the second list of the sample before (a replacement still coming, allowing multicache one sample period to apply its landing); in parentheses, the excess over that legit charge. ")
	pf("Holds charged are the reservations whose placeholder multicache charges on some node (every one here is a deleted pod's hold or the Reservation that took it over).\n\n")

	pf("Checks:\n\n")
	for _, s := range SummariseHolds(res) {
		pf("- %s: %s; %s.\n", s.Phase.Name, check(s.WithExcess == 0, fmt.Sprintf("charge = live pods + holds still awaited at every sample (%d with excess)", s.WithExcess)),
			check(s.HoldsAfterBound == 0 && !s.Lingering && s.LastSample > HoldsGoneWithin,
				fmt.Sprintf("0 holds %v after the end (sampled until %.1fs after)", HoldsGoneWithin, s.LastSample.Seconds())))
	}
	held, ended := res.HoldResults()
	pf("- %s.\n", check(held == ended, fmt.Sprintf("each hold's result counted once: %.0f held, %.0f consumed, expired or released", held, ended)))
	pf("- %s.\n", check(res.InvariantViolations == 0, fmt.Sprintf("multicache's invariant check (its verify loop): %.0f violations", res.InvariantViolations)))
	for _, v := range res.Violations {
		pf("  - `%s`\n", v)
	}
	pf("- %s.\n", check(res.Compare == 0, fmt.Sprintf("/debug/cache/compare at the end: %d differences", res.Compare)))
	if res.SampleErrors > 0 {
		pf("- %d samples failed; the last: %v.\n", res.SampleErrors, res.LastSampleErr)
	}
	pf("\n`multicache_reserve_on_delete_total` at the end: %s. Replacement Reservations in the API at the end: %s. Kubelet writes retried: %d.\n",
		harness.Counts(res.Counters), harness.Counts(res.Reservations), res.KubeletErrors)
	if len(res.Evidence) > 0 {
		pf("\nSamples with an excess were kept: %s.\n", strings.Join(res.Evidence, "; "))
	}
}

func excess(v, legit int64, node string) string {
	s := fmt.Sprintf("%dm", v)
	if v > 0 && legit > 0 {
		s += fmt.Sprintf(" (%.1f%%)", 100*float64(v)/float64(legit))
	}
	if v > 0 && node != "" {
		s += " on " + node
	}
	return s
}

func check(ok bool, what string) string {
	if ok {
		return "PASS " + what
	}
	return "FAIL " + what
}
