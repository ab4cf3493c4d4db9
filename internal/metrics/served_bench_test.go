package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// BenchmarkServed_EventsRead is bench-e2e's lag probe: a read of
// /metrics?name[]=multicache_events_total over a kept-alive connection by Go's HTTP client
// (which asks for gzip), against a registry like the operator's (the Go and process
// collectors beside multicache's metrics), with every pod and node child of the events
// counter set. It reports the bytes and allocations of the whole round trip, both ends.
func BenchmarkServed_EventsRead(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := NewServed(reg)
	if err := Register(s); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"Pod", "Node", "NMNode", "CustomNodeResource", "PodGroup", "PodDisruptionBudget", "Owner", "Movement", "Reservation", "ResourceSlice", "ResourceClaim", "DeviceClass"} {
		for _, op := range []string{"add", "update", "delete", "assume", "finish_binding", "forget", "expire"} {
			EventsTotal.WithLabelValues(kind, op, "ok").Add(150000)
		}
	}
	srv := httptest.NewServer(s.Handler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	b.Cleanup(srv.Close)
	url := srv.URL + "/metrics?name[]=multicache_events_total"
	client := srv.Client()
	var n int64
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		m, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%v %s", err, resp.Status)
		}
		n = m
	}
	b.ReportMetric(float64(n), "body-bytes")
}
