package metrics

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// familyGatherer gathers the one family of a metric this package built, as a registry
// holding it alone gathers it (the same family, its metrics in the same order), for less:
// a registry's Gather allocates two channels of a thousand metrics (32 KB), checks every
// metric against its descriptors and hashes its labels for duplicates. The metric was
// checked when the served registry accepted it, and its every read through the whole
// registry checks it again; bench-e2e reads the events counter 500 times a second, in
// the process whose event path it measures (BenchmarkServed_EventsRead).
type familyGatherer struct {
	c   prometheus.Collector
	fam family
}

var _ prometheus.Gatherer = familyGatherer{}

// Gather implements prometheus.Gatherer.
func (g familyGatherer) Gather() ([]*dto.MetricFamily, error) {
	ch := make(chan prometheus.Metric, 16)
	go func() {
		g.c.Collect(ch)
		close(ch)
	}()
	var ms []*dto.Metric
	var err error
	for m := range ch {
		if err != nil {
			continue // drained, so that Collect returns
		}
		out := &dto.Metric{}
		if err = m.Write(out); err == nil {
			ms = append(ms, out)
		}
	}
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	// The registry's order: by the label values, in the order of the label names (the pairs
	// come sorted by name).
	slices.SortFunc(ms, func(a, b *dto.Metric) int {
		for i, l := range a.GetLabel() {
			if i >= len(b.GetLabel()) {
				return 1
			}
			if c := strings.Compare(l.GetValue(), b.GetLabel()[i].GetValue()); c != 0 {
				return c
			}
		}
		return len(a.GetLabel()) - len(b.GetLabel())
	})
	typ := g.fam.typ
	return []*dto.MetricFamily{{Name: &g.fam.name, Help: &g.fam.help, Type: &typ, Metric: ms}}, nil
}
