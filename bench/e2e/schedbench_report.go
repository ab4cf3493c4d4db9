package e2e

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Subject names of bench-scheduler: the stock scheduler and the one whose ratios against it
// the report gives.
const (
	StockSchedulerName      = "kube-scheduler"
	MulticacheSchedulerName = "multicache-scheduler"
)

// SchedRatios are one round's ratios of the multicache scheduler against the stock one.
type SchedRatios struct {
	Round                                          int
	PodsPerSecond, P50, P99, CPU, SettledRSS, Peak float64
	// SettledRSSApart is the multicache scheduler's settled RSS over the sum of the stock
	// scheduler's and multicache's operator alone (0 when the operator was not measured).
	SettledRSSApart float64
}

// Ratios pairs the runs of each round that has both subjects.
func (r *SchedBenchResult) Ratios() []SchedRatios {
	var out []SchedRatios
	for round := range r.Config.Rounds {
		var stock, mc *SchedRun
		for i := range r.Runs {
			run := &r.Runs[i]
			if run.Round != round {
				continue
			}
			switch run.Subject {
			case StockSchedulerName:
				stock = run
			case MulticacheSchedulerName:
				mc = run
			}
		}
		if stock == nil || mc == nil {
			continue
		}
		apart := 0.0
		if stock.Operator != nil {
			apart = ratio(float64(mc.SettledRSS), float64(stock.SettledRSS+stock.Operator.SettledRSS))
		}
		out = append(out, SchedRatios{
			SettledRSSApart: apart,
			Round:           round,
			PodsPerSecond:   ratio(mc.PodsPerSecond(), stock.PodsPerSecond()),
			P50:             ratio(float64(mc.Latency.P50), float64(stock.Latency.P50)),
			P99:             ratio(float64(mc.Latency.P99), float64(stock.Latency.P99)),
			CPU:             ratio(float64(mc.CPU), float64(stock.CPU)),
			SettledRSS:      ratio(float64(mc.SettledRSS), float64(stock.SettledRSS)),
			Peak:            ratio(float64(mc.PeakRSS), float64(stock.PeakRSS)),
		})
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// medianF is the median of f over xs (the mean of the two middle ones for an even count).
func medianF[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// WriteSchedBenchReport writes the markdown report: the setting, every run, and the ratios
// of each round with their median.
func WriteSchedBenchReport(w io.Writer, res *SchedBenchResult, machine string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	cfg := res.Config
	p("## bench-scheduler: %d nodes, %d pending pods, %d round(s)\n\n", cfg.Nodes, cfg.Pods, cfg.Rounds)
	p("%s; run %s.\n\n", machine, res.Started.UTC().Format(time.RFC3339))
	p("Each run: a fresh kube-apiserver and etcd, %d Ready nodes (64 CPU, 256Gi, 110 pods), the scheduler started "+
		"(`--kubeconfig --leader-elect=false --secure-port`, same flags for both), then %d pods of %d ReplicaSets "+
		"created by %d parallel writers at once. "+
		"*Span*: first create sent to last binding seen; *pods/s* = pods / span. "+
		"*p50/p99*: per pod, the harness's clock from the create call's return to the watch event showing it bound. "+
		"*CPU*: the scheduler's user+system CPU over the span (/proc); *up*: process start until its cache held every node. "+
		"*RSS*: VmRSS %v after the last binding; *peak*: VmHWM since the start.\n\n",
		cfg.Nodes, cfg.Pods, ceilDiv(cfg.Pods, PodsPerReplicaSet), cfg.Writers, cfg.Settle)
	p("| round | scheduler | up (s) | CPU to up (s) | create (s) | span (s) | pods/s | p50 (ms) | p99 (ms) | CPU (s) | kube-apiserver CPU (s) | etcd CPU (s) | RSS settled (MiB) | peak RSS (MiB) | heap after GC (MiB) |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Runs {
		p("| %d | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f |\n",
			r.Round+1, r.Subject, r.Up.Seconds(), r.CPUUp.Seconds(), r.Create.Seconds(), r.Span.Seconds(), r.PodsPerSecond(),
			msf(r.Latency.P50), msf(r.Latency.P99), r.CPU.Seconds(),
			r.APIServerCPU.Seconds(), r.EtcdCPU.Seconds(), mibf(r.SettledRSS), mibf(r.PeakRSS), mibf(r.HeapAfterGC))
		if op := r.Operator; op != nil {
			p("| %d | %s alone | %.1f | %.1f | – | – | – | – | – | – | – | – | %.0f | %.0f | %.0f |\n",
				r.Round+1, op.Subject, op.Full.Seconds(), op.CPU.Seconds(), mibf(op.SettledRSS), mibf(op.PeakRSS), mibf(op.HeapAfterGC))
		}
	}
	ratios := res.Ratios()
	if len(ratios) == 0 {
		return
	}
	p("\nRatios %s / %s (throughput target ≥ 0.9, p99 target ≤ 1.2); *RSS / apart*: settled RSS over "+
		"%s's plus multicache's operator alone on the same cluster (target < 1):\n\n", MulticacheSchedulerName, StockSchedulerName, StockSchedulerName)
	p("| round | pods/s | p50 | p99 | CPU | RSS settled | peak RSS | RSS / apart |\n|---|---|---|---|---|---|---|---|\n")
	for _, q := range ratios {
		p("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", q.Round+1, q.PodsPerSecond, q.P50, q.P99, q.CPU, q.SettledRSS, q.Peak, ratioCell(q.SettledRSSApart))
	}
	p("| **median** | **%.2f** | **%.2f** | **%.2f** | **%.2f** | **%.2f** | **%.2f** | **%s** |\n",
		medianF(ratios, func(q SchedRatios) float64 { return q.PodsPerSecond }),
		medianF(ratios, func(q SchedRatios) float64 { return q.P50 }),
		medianF(ratios, func(q SchedRatios) float64 { return q.P99 }),
		medianF(ratios, func(q SchedRatios) float64 { return q.CPU }),
		medianF(ratios, func(q SchedRatios) float64 { return q.SettledRSS }),
		medianF(ratios, func(q SchedRatios) float64 { return q.Peak }),
		ratioCell(medianF(slices.DeleteFunc(slices.Clone(ratios), func(q SchedRatios) bool { return q.SettledRSSApart == 0 }),
			func(q SchedRatios) float64 { return q.SettledRSSApart })))
}

// ratioCell is a ratio, or a dash when it was not measured (0).
func ratioCell(r float64) string {
	if r == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}
