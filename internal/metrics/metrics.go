// Package metrics defines the Prometheus metrics of multicache. They are registered on the
// controller-runtime registry by Register (main calls it once), so they are served with the
// controller-runtime metrics on --metrics-bind-address.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "multicache"

var (
	// EventsTotal counts events the handler received, by kind, op and result ("ok" or the
	// reason it was rejected, e.g. "already_assumed").
	EventsTotal = counterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "events_total",
		Help: "Events received by the cache handler, by kind, operation and result (ok or the rejection reason).",
	}, []string{"kind", "op", "result"})

	// FeedReordersTotal counts notifications that arrived out of the order of the objects they
	// describe, by kind and what the cache did: late_delete (a delete of an object already
	// replaced under its name: ignored) and version_backwards (an object whose version went
	// backwards in the informer, as after an etcd restore without --bump-revision: taken).
	FeedReordersTotal = counterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "feed_reorders_total",
		Help: "Notifications out of order with the cache, by kind and result: late_delete (ignored), version_backwards (taken).",
	}, []string{"kind", "result"})

	// StoreOpDuration is how long one store takes for one event. It observes one event in
	// SampleEvery, so the hot path stays cheap; use EventsTotal for rates.
	StoreOpDuration = histogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "store_op_duration_seconds",
		Help:    "Time one store takes to apply one event (sampled: one event in 16).",
		Buckets: prometheus.ExponentialBuckets(100e-9, 4, 10), // 100ns .. 26ms
	}, []string{"store", "op"})

	// ExpiredPodsTotal counts assumed pods that expired without the API confirming them.
	ExpiredPodsTotal = counter(prometheus.CounterOpts{
		Namespace: namespace, Name: "expired_pods_total",
		Help: "Assumed pods that expired (binding finished, TTL passed, never confirmed by the API).",
	})

	// ReaperExpiredTotal counts reservations the reaper expired.
	ReaperExpiredTotal = counter(prometheus.CounterOpts{
		Namespace: namespace, Name: "reaper_expired_total",
		Help: "Reservations the reaper moved to Expired because their TTL ran out unmatched.",
	})

	// ReserveOnDeleteTotal counts what became of deleted pods that asked to keep their place
	// (multicache.dev/reserve-on-delete), by result: held (a hold placed: its owner wants a
	// replacement, or multicache cannot read its owner), not_needed (its owner already has
	// what it wants), released_scale_down (a hold released because its owner no longer
	// wants a replacement), consumed (its replacement took the place), expired (the TTL
	// ran out first), invalid_annotation (not a boolean), cannot_keep (nothing to hold, or no
	// labels to select a replacement by). Each replica counts its own view.
	ReserveOnDeleteTotal = counterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "reserve_on_delete_total",
		Help: "Deleted pods annotated multicache.dev/reserve-on-delete, by result (held, not_needed, released_scale_down, consumed, expired, invalid_annotation, cannot_keep).",
	}, []string{"result"})

	// SnapshotDuration is how long UpdateSnapshot takes.
	SnapshotDuration = histogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "snapshot_duration_seconds",
		Help:    "Time to bring a snapshot up to date.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10), // 1us .. 262ms
	})

	// InvariantViolationsTotal counts violated invariants found by CheckInvariants.
	InvariantViolationsTotal = counter(prometheus.CounterOpts{
		Namespace: namespace, Name: "invariant_violations_total",
		Help: "Invariant violations found when the cache checked itself.",
	})

	// InvariantRechecksTotal counts the checks in parts that found something and ran again,
	// all nodes under one hold of the read lock and all pods under another, by result: cleared (the whole check found nothing:
	// events came between two parts) or confirmed (it found violations). Its rate is how
	// often a verify run takes the long holds that checking in parts avoids.
	InvariantRechecksTotal = counterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "invariant_rechecks_total",
		Help: "Self-checks in parts that suspected a violation and ran again with all nodes in one hold of the lock and all pods in another, by result (cleared: events between two parts; confirmed).",
	}, []string{"result"})
)

// KeptTotalsRebuiltTotal counts, by store, the totals a store keeps as events change
// them that a confirmed self-check found wrong and that were rebuilt from the objects the
// store holds (store.TotalsRebuilder).
var KeptTotalsRebuiltTotal = counterVec(prometheus.CounterOpts{
	Namespace: namespace, Name: "kept_totals_rebuilt_total",
	Help: "Totals kept as events change them (the devices store's cluster counts) that a confirmed self-check found wrong, rebuilt from the store's objects, by store.",
}, []string{"store"})

// The values of InvariantRechecksTotal's result label.
const (
	RecheckCleared   = "cleared"
	RecheckConfirmed = "confirmed"
)

// InvariantRecheckResults are the values of InvariantRechecksTotal's result label.
var InvariantRecheckResults = []string{RecheckCleared, RecheckConfirmed}

var (
	// CaughtUp is 1 once the cache applied everything its informers held at sync.
	CaughtUp = gauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "cache_caught_up",
		Help: "1 once every feed applied every object its informer held when it synced (what /readyz waits for), else 0.",
	})

	// CatchUpSeconds is how long the cache took to catch up after start.
	CatchUpSeconds = gauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "cache_catch_up_seconds",
		Help: "Seconds from the start of the operator until the cache caught up (0 until then).",
	})

	// CatchUpObjects is how many objects the informers held at sync, all applied when the
	// cache caught up.
	CatchUpObjects = gauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "cache_catch_up_objects",
		Help: "Objects the informers held at sync, every one applied by the time the cache caught up.",
	})

	// DriftTotal counts objects on which the cache and the informers disagreed for longer
	// than an event takes to arrive, by kind; each was repaired by feeding it again.
	DriftTotal = counterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "drift_total",
		Help: "Objects found by the verify loop on which the cache and the informers disagreed (then re-fed), by kind.",
	}, []string{"kind"})

	// VerifyDuration is how long one run of the verify loop takes.
	VerifyDuration = histogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "verify_duration_seconds",
		Help:    "Time one run of the verify loop takes (invariants and the comparison with the informers).",
		Buckets: prometheus.ExponentialBuckets(1e-3, 4, 8), // 1ms .. 16s
	})
)

// ReserveOnDeleteResults are the values of ReserveOnDeleteTotal's result label.
// (reservationstore counts them; TestReserveOnDeleteResults_AreTheOnesTheMetricStartsWith
// keeps the two lists the same).
var ReserveOnDeleteResults = []string{"held", "not_needed", "released_scale_down", "consumed", "expired", "invalid_annotation", "cannot_keep"}

// SampleEvery is the sampling period of StoreOpDuration, in events.
const SampleEvery = 16

// Register registers every metric of this package, and the collectors (gauges read from the
// cache at scrape time), on reg. The counters whose labels are known in advance start with a
// zero series for each, so that a dashboard shows 0 rather than no data.
func Register(reg prometheus.Registerer, collectors ...prometheus.Collector) error {
	for _, result := range ReserveOnDeleteResults {
		ReserveOnDeleteTotal.WithLabelValues(result)
	}
	for _, result := range InvariantRecheckResults {
		InvariantRechecksTotal.WithLabelValues(result)
	}
	for _, c := range append(All(), collectors...) {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// The results of FeedReordersTotal.
const (
	ReorderLateDelete       = "late_delete"
	ReorderVersionBackwards = "version_backwards"
)

// All returns every metric of this package.
func All() []prometheus.Collector {
	return []prometheus.Collector{
		EventsTotal, FeedReordersTotal, StoreOpDuration, ExpiredPodsTotal, ReaperExpiredTotal, ReserveOnDeleteTotal, SnapshotDuration, InvariantViolationsTotal,
		InvariantRechecksTotal, KeptTotalsRebuiltTotal,
		CaughtUp, CatchUpSeconds, CatchUpObjects, DriftTotal, VerifyDuration,
	}
}

// builtNames is the family name of every metric this package built (see Served).
var builtNames = map[prometheus.Collector]string{}

func built[C prometheus.Collector](c C, namespace, subsystem, name string) C {
	builtNames[c] = prometheus.BuildFQName(namespace, subsystem, name)
	return c
}

func counter(o prometheus.CounterOpts) prometheus.Counter {
	return built(prometheus.NewCounter(o), o.Namespace, o.Subsystem, o.Name)
}

func counterVec(o prometheus.CounterOpts, labels []string) *prometheus.CounterVec {
	return built(prometheus.NewCounterVec(o, labels), o.Namespace, o.Subsystem, o.Name)
}

func gauge(o prometheus.GaugeOpts) prometheus.Gauge {
	return built(prometheus.NewGauge(o), o.Namespace, o.Subsystem, o.Name)
}

func histogram(o prometheus.HistogramOpts) prometheus.Histogram {
	return built(prometheus.NewHistogram(o), o.Namespace, o.Subsystem, o.Name)
}

func histogramVec(o prometheus.HistogramOpts, labels []string) *prometheus.HistogramVec {
	return built(prometheus.NewHistogramVec(o, labels), o.Namespace, o.Subsystem, o.Name)
}
