package handler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Collector exposes the cache's gauges, read at scrape time: multicache_store_objects{store},
// multicache_assumed_pods, multicache_assumed_claims, multicache_reservations{phase},
// multicache_devices{class, state}. It copies the numbers under one short hold of the cache's
// read lock (each read is cheap: no count over the objects but the reservations', the devices
// store keeps its totals as events arrive) and builds and sends the samples after, so that a
// scrape never keeps an event waiting while the registry takes them.
type Collector struct {
	h            *Handler
	objects      *prometheus.Desc
	assumed      *prometheus.Desc
	claims       *prometheus.Desc
	reservations *prometheus.Desc
	devices      *prometheus.Desc
}

// The names of the gauges (MetricNames).
const (
	storeObjectsName = "multicache_store_objects"
	assumedPodsName  = "multicache_assumed_pods"
	assumedClaimName = "multicache_assumed_claims"
	reservationsName = "multicache_reservations"
	devicesName      = "multicache_devices"
)

// deviceStates are the values of multicache_devices' state label.
var deviceStates = []string{"total", "allocated", "free"}

// reservationPhases are the values of multicache_reservations' phase label.
var reservationPhases = []v1alpha1.ReservationPhase{v1alpha1.ReservationPending, v1alpha1.ReservationReserved,
	v1alpha1.ReservationMatched, v1alpha1.ReservationExpired}

// NewCollector returns the gauges of h, to register with metrics.Register.
func NewCollector(h *Handler) *Collector {
	return &Collector{
		h:            h,
		objects:      prometheus.NewDesc(storeObjectsName, "Objects held per store.", []string{"store"}, nil),
		assumed:      prometheus.NewDesc(assumedPodsName, "Pods assumed and not yet confirmed by the API.", nil, nil),
		claims:       prometheus.NewDesc(assumedClaimName, "ResourceClaims whose allocation a scheduler assumed and the API does not show yet.", nil, nil),
		reservations: prometheus.NewDesc(reservationsName, "Reservations per phase.", []string{"phase"}, nil),
		devices: prometheus.NewDesc(devicesName,
			"DRA devices published (total), held by claims (allocated) and free, each device counted once however many nodes it reaches; "+
				"per DeviceClass, and with class=\"\" every device whatever its classes (a device may be in several classes: do not sum over class).",
			[]string{"class", "state"}, nil),
	}
}

// MetricNames implements metrics.Named: a read of /metrics naming only these gathers this
// collector alone.
func (c *Collector) MetricNames() []string {
	return []string{storeObjectsName, assumedPodsName, assumedClaimName, reservationsName, devicesName}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.assumed
	ch <- c.claims
	ch <- c.reservations
	ch <- c.devices
}

// gaugeValues are the numbers one Collect reads under the lock.
type gaugeValues struct {
	objects         []storeLen
	assumed, claims int
	// hasReservations and hasDevices say whether those stores are on.
	hasReservations, hasDevices bool
	reservations                map[v1alpha1.ReservationPhase]int
	allDevices                  store.DeviceCounts
	devicesByClass              map[string]store.DeviceCounts
}

type storeLen struct {
	name stores.Name
	len  int
}

// read copies the numbers under one hold of the read lock.
func (c *Collector) read() gaugeValues {
	c.h.mu.RLock()
	defer c.h.mu.RUnlock()
	v := gaugeValues{objects: make([]storeLen, 0, len(c.h.stores))}
	for _, s := range c.h.stores {
		v.objects = append(v.objects, storeLen{s.Name(), s.Len()})
	}
	v.assumed, v.claims = c.h.pods.AssumedLen(), len(c.h.claims.assumed)
	if rs, ok := lookup[*reservationstore.Store](c.h, stores.ReservationStoreName); ok {
		v.hasReservations, v.reservations = true, rs.CountByPhase()
	}
	if ds, ok := lookup[*devicestore.Store](c.h, stores.DeviceStoreName); ok {
		v.hasDevices = true
		v.allDevices, v.devicesByClass = ds.ClusterCounts()
	}
	return v
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	v := c.read()
	for _, s := range v.objects {
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(s.len), string(s.name))
	}
	ch <- prometheus.MustNewConstMetric(c.assumed, prometheus.GaugeValue, float64(v.assumed))
	ch <- prometheus.MustNewConstMetric(c.claims, prometheus.GaugeValue, float64(v.claims))
	if v.hasReservations {
		for _, phase := range reservationPhases {
			ch <- prometheus.MustNewConstMetric(c.reservations, prometheus.GaugeValue, float64(v.reservations[phase]), string(phase))
		}
	}
	if v.hasDevices {
		c.collectDevices(ch, "", v.allDevices)
		for class, counts := range v.devicesByClass {
			c.collectDevices(ch, class, counts)
		}
	}
}

// collectDevices sends one class's gauges; class "" (no label) is every device. The
// all-devices series exist while the devices store is on, even before any DRA object does.
func (c *Collector) collectDevices(ch chan<- prometheus.Metric, class string, counts store.DeviceCounts) {
	for i, v := range []int{counts.Total, counts.Allocated, counts.Free} {
		ch <- prometheus.MustNewConstMetric(c.devices, prometheus.GaugeValue, float64(v), class, deviceStates[i])
	}
}

var _ prometheus.Collector = (*Collector)(nil)
