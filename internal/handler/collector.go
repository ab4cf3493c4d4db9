package handler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Collector exposes the cache's gauges, read at scrape time (nothing on the event path):
// multicache_store_objects{store}, multicache_assumed_pods, multicache_reservations{phase}.
type Collector struct {
	h            *Handler
	objects      *prometheus.Desc
	assumed      *prometheus.Desc
	reservations *prometheus.Desc
}

// NewCollector returns the gauges of h, to register with metrics.Register.
func NewCollector(h *Handler) *Collector {
	return &Collector{
		h:            h,
		objects:      prometheus.NewDesc("multicache_store_objects", "Objects held per store.", []string{"store"}, nil),
		assumed:      prometheus.NewDesc("multicache_assumed_pods", "Pods assumed and not yet confirmed by the API.", nil, nil),
		reservations: prometheus.NewDesc("multicache_reservations", "Reservations per phase.", []string{"phase"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.assumed
	ch <- c.reservations
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.h.mu.RLock()
	defer c.h.mu.RUnlock()
	for _, s := range c.h.stores {
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(s.Len()), string(s.Name()))
	}
	ch <- prometheus.MustNewConstMetric(c.assumed, prometheus.GaugeValue, float64(c.h.pods.AssumedLen()))
	if rs, ok := lookup[reservationQuerier](c.h, stores.ReservationStoreName); ok {
		counts := rs.CountByPhase()
		for _, phase := range []v1alpha1.ReservationPhase{v1alpha1.ReservationPending, v1alpha1.ReservationReserved,
			v1alpha1.ReservationMatched, v1alpha1.ReservationExpired} {
			ch <- prometheus.MustNewConstMetric(c.reservations, prometheus.GaugeValue, float64(counts[phase]), string(phase))
		}
	}
}

var _ prometheus.Collector = (*Collector)(nil)
