package operator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkMetrics_Scrape measures what one read of /metrics costs a running operator whose
// cache holds 5,000 nodes, 150,000 pods and 1,000 reservations: the operator is built as
// main builds it (its collectors on controller-runtime's registry, next to controller-runtime's
// and client-go's), its metrics server on a local port, the cache filled in-process.
// gather/* gathers one collector set in a registry of its own (the Go runtime's with every
// runtime/metrics series, as controller-runtime registers it; the process'; multicache's
// counters and histograms; the cache gauges) and gather/all the whole registry; scrape/*
// reads the server, the way the e2e harness reads multicache_events_total (filtered) and
// the way Prometheus does (all). Run:
// KUBEBUILDER_ASSETS=... go test -run '^$' -bench BenchmarkMetrics_Scrape -benchmem ./internal/operator
func BenchmarkMetrics_Scrape(b *testing.B) {
	addr := freeAddr(b)
	opts := DefaultOptions()
	opts.MetricsBindAddress, opts.MetricsSecure = addr, false
	opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0"
	opts.LowFreeThreshold, opts.VerifyPeriod = 0, 0
	opts.SkipControllerNameValidation = true
	op, err := New(env.Config, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	fillCache(b, op.Cache)
	url := "http://" + addr + "/metrics"
	waitServing(b, url)

	for _, g := range []struct {
		name       string
		collectors []prometheus.Collector
	}{
		{"go", []prometheus.Collector{collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll))}},
		{"process", []prometheus.Collector{collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}},
		{"multicache-counters", metrics.All()},
		{"cache-gauges", []prometheus.Collector{handler.NewCollector(op.Cache)}},
	} {
		reg := prometheus.NewRegistry()
		reg.MustRegister(g.collectors...)
		b.Run("gather/"+g.name, func(b *testing.B) { benchGather(b, reg) })
	}
	b.Run("gather/all", func(b *testing.B) { benchGather(b, ctrlmetrics.Registry) })
	b.Run("scrape/events-total", func(b *testing.B) { benchScrape(b, url+"?name[]=multicache_events_total") })
	b.Run("scrape/all", func(b *testing.B) { benchScrape(b, url) })
}

func benchGather(b *testing.B, g prometheus.Gatherer) {
	b.ReportAllocs()
	samples := 0
	for b.Loop() {
		mfs, err := g.Gather()
		if err != nil {
			b.Fatal(err)
		}
		samples = len(mfs)
	}
	b.ReportMetric(float64(samples), "families")
}

func benchScrape(b *testing.B, url string) {
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %v %v", url, resp.Status, err)
		}
		size = int(n)
	}
	b.ReportMetric(float64(size), "bytes")
}

// fillCache feeds the cache 5,000 nodes, 150,000 pods (30 a node) and 1,000 reservations
// directly, as the feeds would.
func fillCache(b *testing.B, h *handler.Handler) {
	const nodes, pods, reservations = 5000, 150000, 1000
	for i := range nodes {
		if err := h.Add(ts.MakeNode(fmt.Sprintf("n-%05d", i), "64", "256Gi")); err != nil {
			b.Fatal(err)
		}
	}
	for i := range pods {
		pod := ts.MakePod("ns", fmt.Sprintf("p-%06d", i), ts.OnNode(fmt.Sprintf("n-%05d", i%nodes)),
			ts.Requests("100m", "128Mi"), ts.WithLabels("app", fmt.Sprintf("a-%d", i%500)))
		if err := h.Add(pod); err != nil {
			b.Fatal(err)
		}
	}
	for i := range reservations {
		r := ts.MakeReservation("ns", fmt.Sprintf("r-%04d", i), fmt.Sprintf("n-%05d", i%nodes), "100m", "128Mi", "app", "none")
		if err := h.Add(r); err != nil {
			b.Fatal(err)
		}
	}
}

// freeAddr returns a local address free a moment ago.
func freeAddr(b testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitServing waits until url answers 200.
func waitServing(b testing.TB, url string) {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s does not answer: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
