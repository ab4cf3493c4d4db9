package e2e

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestSchedBenchRatios(t *testing.T) {
	run := func(subject string, round int, span, p99 time.Duration, rss int64) SchedRun {
		return SchedRun{Subject: subject, Round: round, Bound: 1000, Span: span, Latency: Quantiles{P50: p99 / 2, P99: p99},
			CPU: span / 2, SettledRSS: rss, PeakRSS: 2 * rss}
	}
	withOperator := run(StockSchedulerName, 0, 10*time.Second, time.Second, 100)
	withOperator.Operator = &ColdStart{Subject: "multicache", SettledRSS: 50}
	res := &SchedBenchResult{Config: SchedBenchConfig{Nodes: 10, Pods: 1000, Rounds: 3, Writers: 4}, Runs: []SchedRun{
		withOperator,
		run(MulticacheSchedulerName, 0, 20*time.Second, 2*time.Second, 150),
		run(MulticacheSchedulerName, 1, 10*time.Second, time.Second, 100),
		run(StockSchedulerName, 1, 10*time.Second, time.Second, 100),
		run(StockSchedulerName, 2, 10*time.Second, time.Second, 100), // no pair: left out
	}}
	got := res.Ratios()
	if len(got) != 2 {
		t.Fatalf("ratios of %d rounds, want 2: %+v", len(got), got)
	}
	if got[0].PodsPerSecond != 0.5 || got[0].P99 != 2 || got[0].SettledRSS != 1.5 || got[1].PodsPerSecond != 1 ||
		got[0].SettledRSSApart != 1 || got[1].SettledRSSApart != 0 {
		t.Errorf("ratios %+v", got)
	}
	if m := medianF(got, func(q SchedRatios) float64 { return q.P99 }); math.Abs(m-1.5) > 1e-9 {
		t.Errorf("median p99 ratio %v, want 1.5", m)
	}
	var b strings.Builder
	WriteSchedBenchReport(&b, res, "test machine")
	if n := strings.Count(b.String(), "\n| "); n != 1+6+1+2+1 {
		t.Errorf("%d table rows, want 11 (the header, 5 runs and the operator alone, the ratios' header, 2 rounds, the median):\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "| 1 | multicache alone |") || !strings.Contains(b.String(), "| **1.00** |") {
		t.Errorf("no operator row or no median RSS over the two apart (150 / (100 + 50)):\n%s", b.String())
	}
}
