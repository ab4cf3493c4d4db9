package handler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
)

// Collector exposes the cache's gauges, read at scrape time under the cache's read lock:
// multicache_store_objects{store}, multicache_assumed_pods, multicache_assumed_claims,
// multicache_reservations{phase}, multicache_devices{class, state}. Each read is cheap (no
// count over the objects: the devices store keeps its totals as events arrive), since
// controller-runtime's handler gathers every collector on each read of /metrics, whatever
// names it asks for.
type Collector struct {
	h            *Handler
	objects      *prometheus.Desc
	assumed      *prometheus.Desc
	claims       *prometheus.Desc
	reservations *prometheus.Desc
	devices      *prometheus.Desc
}

// deviceCounter is the devices store as the gauges read it.
type deviceCounter interface {
	stores.Store
	ClusterCounts() (all devicestore.Counts, byClass map[string]devicestore.Counts)
}

var _ deviceCounter = (*devicestore.Store)(nil)

// deviceStates are the values of multicache_devices' state label.
var deviceStates = []string{"total", "allocated", "free"}

// NewCollector returns the gauges of h, to register with metrics.Register.
func NewCollector(h *Handler) *Collector {
	return &Collector{
		h:            h,
		objects:      prometheus.NewDesc("multicache_store_objects", "Objects held per store.", []string{"store"}, nil),
		assumed:      prometheus.NewDesc("multicache_assumed_pods", "Pods assumed and not yet confirmed by the API.", nil, nil),
		claims:       prometheus.NewDesc("multicache_assumed_claims", "ResourceClaims whose allocation a scheduler assumed and the API does not show yet.", nil, nil),
		reservations: prometheus.NewDesc("multicache_reservations", "Reservations per phase.", []string{"phase"}, nil),
		devices: prometheus.NewDesc("multicache_devices",
			"DRA devices published (total), held by claims (allocated) and free, each device counted once however many nodes it reaches; "+
				"per DeviceClass, and with class=\"\" every device whatever its classes (a device may be in several classes: do not sum over class).",
			[]string{"class", "state"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.assumed
	ch <- c.claims
	ch <- c.reservations
	ch <- c.devices
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.h.mu.RLock()
	defer c.h.mu.RUnlock()
	for _, s := range c.h.stores {
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(s.Len()), string(s.Name()))
	}
	ch <- prometheus.MustNewConstMetric(c.assumed, prometheus.GaugeValue, float64(c.h.pods.AssumedLen()))
	ch <- prometheus.MustNewConstMetric(c.claims, prometheus.GaugeValue, float64(len(c.h.claims.assumed)))
	if rs, ok := lookup[reservationQuerier](c.h, stores.ReservationStoreName); ok {
		counts := rs.CountByPhase()
		for _, phase := range []v1alpha1.ReservationPhase{v1alpha1.ReservationPending, v1alpha1.ReservationReserved,
			v1alpha1.ReservationMatched, v1alpha1.ReservationExpired} {
			ch <- prometheus.MustNewConstMetric(c.reservations, prometheus.GaugeValue, float64(counts[phase]), string(phase))
		}
	}
	if ds, ok := lookup[deviceCounter](c.h, stores.DeviceStoreName); ok {
		all, byClass := ds.ClusterCounts()
		c.collectDevices(ch, "", all)
		for class, counts := range byClass {
			c.collectDevices(ch, class, counts)
		}
	}
}

// collectDevices sends one class's gauges; class "" (no label) is every device. The
// all-devices series exist while the devices store is on, even before any DRA object does.
func (c *Collector) collectDevices(ch chan<- prometheus.Metric, class string, counts devicestore.Counts) {
	for i, v := range []int{counts.Total, counts.Allocated, counts.Free} {
		ch <- prometheus.MustNewConstMetric(c.devices, prometheus.GaugeValue, float64(v), class, deviceStates[i])
	}
}

var _ prometheus.Collector = (*Collector)(nil)
