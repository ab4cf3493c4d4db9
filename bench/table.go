package bench

import (
	"slices"
	"testing"
)

// HeapPerPodName names the heap measurement in tables.
const HeapPerPodName = "HeapPerPod"

// Run is one round's result of one variant for one operation.
type Run struct {
	NsPerOp, AllocsPerOp, BytesPerOp float64
	// Metric is the figure ratios compare: ns/op, or the operation's own unit (ns/node,
	// B/pod).
	Metric float64
}

// Row is one operation measured for every variant, round after round.
type Row struct {
	// Op is the operation.
	Op Op
	// Unit is the unit of Run.Metric.
	Unit string
	// Runs are by variant name, one per round.
	Runs map[string][]Run
}

// NewRow returns an empty row for op, comparing unit.
func NewRow(op Op, unit string) *Row { return &Row{Op: op, Unit: unit, Runs: map[string][]Run{}} }

// Record adds one round's result of a variant.
func (r *Row) Record(variant string, res testing.BenchmarkResult) {
	run := Run{
		NsPerOp:     float64(res.T.Nanoseconds()) / float64(res.N),
		AllocsPerOp: float64(res.MemAllocs) / float64(res.N),
		BytesPerOp:  float64(res.MemBytes) / float64(res.N),
	}
	run.Metric = run.NsPerOp
	if r.Unit != "ns/op" {
		run.Metric = res.Extra[r.Unit]
	}
	r.Runs[variant] = append(r.Runs[variant], run)
}

// Median returns the median over the rounds of one figure of a variant's runs.
func (r *Row) Median(variant string, figure func(Run) float64) float64 {
	runs := r.Runs[variant]
	xs := make([]float64, len(runs))
	for i, run := range runs {
		xs[i] = figure(run)
	}
	return Median(xs)
}

// Ratio returns the median of the per-round ratios variant/kube of the compared metric,
// and their range. Rounds are paired: round r of the variant against round r of kube,
// measured moments apart in the same process.
func (r *Row) Ratio(variant string) (median, lo, hi float64) {
	anchor, runs := r.Runs[Kube.Name], r.Runs[variant]
	ratios := make([]float64, 0, len(runs))
	for i := range runs {
		if i < len(anchor) && anchor[i].Metric > 0 {
			ratios = append(ratios, runs[i].Metric/anchor[i].Metric)
		}
	}
	if len(ratios) == 0 {
		return 0, 0, 0
	}
	return Median(ratios), slices.Min(ratios), slices.Max(ratios)
}

// Target returns the bound a variant's ratio to kube must meet for an operation, if any:
// per event, 0.5 for mc-core and 1.0 for mc-all; 1.0 for both on the incremental snapshot
// (per changed node) and on the heap per pod.
func Target(op Op, variant string) (float64, bool) {
	switch {
	case variant == Kube.Name:
		return 0, false
	case op.PerEvent && variant == MCCore.Name:
		return 0.5, true
	case op.PerEvent:
		return 1.0, true
	case op.Name == SnapshotIncremental.Name, op.Name == HeapPerPodName:
		return 1.0, true
	}
	return 0, false
}

// Median returns the median of xs (the mean of the middle two for an even count), 0 for
// none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
