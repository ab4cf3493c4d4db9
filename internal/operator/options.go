// Package operator wires multicache together: the manager, the cache handler and its stores,
// the reconcilers, the status writers, the reaper and the servers. main.go turns flags into
// Options and calls New and Start; the end-to-end tests call New to run the same wiring
// in-process.
package operator

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Options configure the operator. DefaultOptions documents every default; flags override.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics; "0" disables.
	MetricsBindAddress string
	// MetricsSecure serves metrics over HTTPS with authentication and authorization.
	MetricsSecure bool
	// EnableHTTP2 lets the metrics server negotiate HTTP/2. Off by default: HTTP/2's stream
	// handling has had denial-of-service flaws (CVE-2023-44487, CVE-2023-39325) and a
	// scraper needs nothing but HTTP/1.1.
	EnableHTTP2 bool
	// MetricsCertPath is the directory holding the metrics server's serving certificate
	// (MetricsCertName) and key (MetricsCertKey), reloaded when they change (cert-manager
	// rotates them). Empty: a self-signed certificate generated at start.
	MetricsCertPath, MetricsCertName, MetricsCertKey string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables.
	HealthProbeBindAddress string
	// DebugBindAddress serves /debug/cache and /debug/pprof; "0" disables.
	DebugBindAddress string

	// LeaderElect makes one replica the leader; only the leader writes status.
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease. Empty: the pod's namespace in a cluster,
	// "default" outside one.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease.
	LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election (nil: 15s, 10s and
	// 500ms; see defaultRetryPeriod).
	LeaseDuration, RenewDeadline, RetryPeriod *time.Duration
	// Leading, set when the operator is embedded in a component that elects its own leader
	// (a scheduler), replaces multicache's election: the leader-only work starts once it is
	// closed, never while it stays open (gate.go). Not with LeaderElect.
	Leading <-chan struct{}

	// Stores are the enabled stores, named in Registry; nodes and pods are always enabled.
	Stores []string
	// Registry is the stores Stores chooses from, in fan-out order (nil: handler.BuiltIn()).
	// pkg/multicache adds the stores registered out of tree.
	Registry handler.Registry
	// Siblings are built once the cache exists and started once it caught up.
	Siblings []SiblingFactory
	// PodGroupSources are the APIs pod groups are read from (multicache, native,
	// scheduler-plugins); empty means every one whose API the server serves, found by
	// discovery at start. A source named here whose API is not served is a start-up error.
	PodGroupSources []string
	// PodAssumedTTL is how long an assumed pod lives after FinishBinding unconfirmed.
	PodAssumedTTL time.Duration
	// Period is how often assumed pods are expired and reservations reaped.
	Period time.Duration
	// ReservationTTL is the seed's ReservationTTL: how long a deleted pod annotated
	// multicache.dev/reserve-on-delete keeps its place on its node for its replacement.
	// Given as a flag without --reservation-default-ttl it also sets ReservationDefaultTTL,
	// the one meaning it had before (deprecated; see ReservationTTLAliasUsed).
	ReservationTTL time.Duration
	// ReservationDefaultTTL is how long a reservation without ttlSeconds stays Reserved
	// unmatched.
	ReservationDefaultTTL time.Duration
	// reservationTTLFlag and defaultTTLFlag record which of the two flags were given.
	reservationTTLFlag, defaultTTLFlag bool
	// ReservationGCGrace is how long an Expired reservation is kept before it is deleted.
	ReservationGCGrace time.Duration
	// ComponentName names this operator in Movement status and logs.
	ComponentName string
	// SchedulerName is the scheduler whose cache this is (CacheHandler.SchedulerType).
	SchedulerName string
	// SubClusterKey and SubCluster restrict the cache to the nodes labelled key=value and the
	// pods bound to them. Both or neither.
	SubClusterKey, SubCluster string

	// LowFreeThreshold is the fraction of allocatable under which the free-capacity sibling
	// controller reports a node; 0 disables it.
	LowFreeThreshold float64
	// LowFreePeriod is how often the free-capacity sibling controller scans.
	LowFreePeriod time.Duration

	// VerifyPeriod is how often the cache checks its invariants and compares itself with the
	// informers; 0 disables the verify loop.
	VerifyPeriod time.Duration

	// DRANodeAllocatableResources mirrors kube-scheduler's feature gate of that name (alpha
	// in v1.37, off by default, as here): on, a pod is charged to its node with the
	// node-allocatable resources its DRA claims were allocated
	// (pod.status.nodeAllocatableResourceClaimStatuses; stores.Accounting). Set it as the
	// cluster's kube-scheduler has the gate.
	DRANodeAllocatableResources bool

	// TrimAtDecode has the cache's protobuf lists and watches skip, before decoding, the
	// fields its transforms drop (managedFields; the workload owners' pod template spec).
	// The metadata lists of /debug/cache/compare skip managedFields the same way. Off,
	// every object is decoded whole and then transformed: the same cache, more CPU.
	TrimAtDecode bool

	// WholePods keeps every field of the cache's pods. Off (the default), the cache's pods
	// leave out what only the kubelet and the container runtime read (images, commands,
	// environment, probes, mounts, DNS and service account settings, IPs, container
	// images and IDs: podfields.go), skipped at decode with TrimAtDecode; what
	// kube-scheduler and the descheduler read of running pods stays. The API reader
	// always reads whole pods.
	WholePods bool

	// Clock drives TTLs and deadlines (default: the real clock; tests use a fake one).
	Clock clock.WithTicker
	// SkipControllerNameValidation lets several operators run in one process (tests).
	SkipControllerNameValidation bool
}

// DefaultOptions returns the options used when no flag is given.
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     ":8443",
		MetricsSecure:          true,
		MetricsCertName:        "tls.crt",
		MetricsCertKey:         "tls.key",
		HealthProbeBindAddress: ":8081",
		DebugBindAddress:       "127.0.0.1:8082",
		LeaderElectionID:       "multicache.cache.multicache.dev",
		Stores:                 names(stores.FanOutOrder),
		PodAssumedTTL:          15 * time.Minute,
		Period:                 time.Second,
		ReservationTTL:         10 * time.Minute,
		ReservationDefaultTTL:  10 * time.Minute,
		ReservationGCGrace:     5 * time.Minute,
		ComponentName:          "multicache",
		SchedulerName:          "default-scheduler",
		LowFreeThreshold:       0.1,
		LowFreePeriod:          30 * time.Second,
		VerifyPeriod:           time.Minute,
		TrimAtDecode:           true,
	}
}

// BindFlags registers one flag per option on fs, with the current values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		`Address the metrics endpoint binds to, e.g. ":8443"; "0" disables it.`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve metrics over HTTPS, allowing only callers the API server authorizes to get /metrics.")
	fs.StringVar(&o.MetricsCertPath, "metrics-cert-path", o.MetricsCertPath,
		"Directory of the metrics server's serving certificate and key (e.g. a cert-manager Secret's mount); empty: self-signed.")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", o.MetricsCertName, "File name of the certificate in --metrics-cert-path.")
	fs.StringVar(&o.MetricsCertKey, "metrics-cert-key", o.MetricsCertKey, "File name of the key in --metrics-cert-path.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", o.EnableHTTP2,
		"Let the metrics server negotiate HTTP/2 (off: HTTP/1.1 only, immune to HTTP/2 stream floods).")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		`Address /healthz and /readyz bind to; "0" disables them.`)
	fs.StringVar(&o.DebugBindAddress, "debug-bind-address", o.DebugBindAddress,
		`Address of the debug server (/debug/cache, /debug/cache/nodes/{name}, /debug/cache/compare, /debug/pprof/); "0" disables it.`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader among replicas: every replica keeps its cache warm, only the leader writes status.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		`Namespace of the leader-election Lease (default: the pod's namespace, or "default" outside a cluster).`)
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader-election Lease.")
	fs.Var(optionalDuration{&o.LeaseDuration, defaultLeaseDuration}, "leader-elect-lease-duration",
		"How long a standby waits after the leader's last renewal before it takes over (failover time).")
	fs.Var(optionalDuration{&o.RenewDeadline, defaultRenewDeadline}, "leader-elect-renew-deadline",
		"How long the leader retries renewing before it gives up leading; its writes stop then. Less than the lease duration.")
	fs.Var(optionalDuration{&o.RetryPeriod, defaultRetryPeriod}, "leader-elect-retry-period",
		"How often the leader renews the lease, and about how often (1 to 2.2 times this) a standby reads it to see whether it expired.")
	fs.Func("stores", fmt.Sprintf("Comma-separated stores to enable, from %s; nodes and pods are always enabled. (default %q)",
		strings.Join(o.knownStores(), ","), strings.Join(o.Stores, ",")), func(v string) error {
		o.Stores = splitList(v)
		return nil
	})
	fs.Func("podgroup-sources", "Comma-separated APIs pod groups are read from: multicache (cache.multicache.dev), native (scheduling.k8s.io/v1alpha3), "+
		"scheduler-plugins (scheduling.x-k8s.io/v1alpha1). (default: every one the API server serves)", func(v string) error {
		o.PodGroupSources = splitList(v)
		return nil
	})
	fs.DurationVar(&o.PodAssumedTTL, "pod-assumed-ttl", o.PodAssumedTTL,
		"How long an assumed pod lives after its binding finished without the API confirming it.")
	fs.DurationVar(&o.Period, "period", o.Period, "How often assumed pods are expired and reservations reaped.")
	fs.Var(&ttlFlag{o: o, alias: true}, "reservation-ttl",
		"How long (a `duration`) a deleted pod annotated multicache.dev/reserve-on-delete keeps its place on its node for its replacement (at most 720h). "+
			"Deprecated use: without --reservation-default-ttl it also sets that, as it did before.")
	fs.Var(&ttlFlag{o: o}, "reservation-default-ttl",
		"How long (a `duration`) a reservation without spec.ttlSeconds stays Reserved with no matching pod.")
	fs.DurationVar(&o.ReservationGCGrace, "reservation-gc-grace", o.ReservationGCGrace,
		"How long an Expired reservation is kept before it is deleted.")
	fs.StringVar(&o.ComponentName, "component-name", o.ComponentName,
		"Name of this operator in Movement status.notifiedSchedulers and in logs.")
	fs.StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "Name of the scheduler this cache serves.")
	fs.StringVar(&o.SubClusterKey, "sub-cluster-key", o.SubClusterKey,
		"Node label that splits the cluster into sub-clusters; with --sub-cluster, watch only that sub-cluster's nodes and their pods.")
	fs.StringVar(&o.SubCluster, "sub-cluster", o.SubCluster, "Value of --sub-cluster-key this replica serves.")
	fs.Float64Var(&o.LowFreeThreshold, "low-free-threshold", o.LowFreeThreshold,
		"Fraction of allocatable cpu or memory under which the free-capacity controller reports a node; 0 disables it.")
	fs.DurationVar(&o.LowFreePeriod, "low-free-period", o.LowFreePeriod, "How often the free-capacity controller scans.")
	fs.DurationVar(&o.VerifyPeriod, "verify-period", o.VerifyPeriod,
		"How often the cache checks its invariants and compares itself with the informers (no API calls), repairing drift; 0 disables it.")
	fs.BoolVar(&o.DRANodeAllocatableResources, "dra-node-allocatable-resources", o.DRANodeAllocatableResources,
		"Charge pods with the cpu, memory and other node-allocatable resources their DRA claims were allocated (pod.status.nodeAllocatableResourceClaimStatuses), "+
			"as kube-scheduler does with its DRANodeAllocatableResources feature gate (alpha, off by default): set it as the cluster's gate is.")
	fs.BoolVar(&o.WholePods, "whole-pods", o.WholePods,
		"Keep every field of the cached pods, for siblings that read them from the cache; by default the cache's pods leave out what only the kubelet and the container runtime read "+
			"(images, commands, env, probes, mounts, DNS and service account settings, IPs, container IDs), and keep what kube-scheduler and the descheduler read of running pods.")
	fs.BoolVar(&o.TrimAtDecode, "trim-at-decode", o.TrimAtDecode,
		"Skip, in the cache's protobuf lists and watches, the fields its transforms drop (managedFields, the workload owners' pod template spec), and managedFields in the metadata lists of /debug/cache/compare, before decoding them; false decodes whole objects (the same cache and comparison, more CPU).")
}

// Validate returns an error naming every flag whose value cannot work.
func (o *Options) Validate() error {
	var errs []error
	bad := func(flagName string, value any, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s=%v: %s", flagName, value, fmt.Sprintf(format, args...)))
	}
	for _, a := range []struct{ flag, addr string }{
		{"metrics-bind-address", o.MetricsBindAddress},
		{"health-probe-bind-address", o.HealthProbeBindAddress},
		{"debug-bind-address", o.DebugBindAddress},
	} {
		if err := validateBindAddress(a.addr); err != nil {
			bad(a.flag, strconv.Quote(a.addr), "%v", err)
		}
	}
	if o.LeaderElect && o.Leading != nil {
		errs = append(errs, errors.New("--leader-elect: an embedded operator follows the embedding component's leader election; turn --leader-elect off"))
	}
	if o.LeaderElect && o.LeaderElectionID == "" {
		bad("leader-election-id", `""`, "must not be empty when --leader-elect is set")
	} else if msgs := validation.IsDNS1123Subdomain(o.LeaseName()); o.LeaderElect && len(msgs) > 0 {
		bad("leader-election-id", o.LeaderElectionID, "the lease name %q is not a valid object name: %s", o.LeaseName(), strings.Join(msgs, "; "))
	}
	if o.MetricsCertPath != "" {
		switch {
		case !o.MetricsSecure:
			bad("metrics-cert-path", o.MetricsCertPath, "needs --metrics-secure (the certificate serves HTTPS)")
		default:
			crt, key := filepath.Join(o.MetricsCertPath, o.MetricsCertName), filepath.Join(o.MetricsCertPath, o.MetricsCertKey)
			if _, err := tls.LoadX509KeyPair(crt, key); err != nil {
				bad("metrics-cert-path", o.MetricsCertPath, "cannot load the serving certificate %s and key %s (--metrics-cert-name, --metrics-cert-key): %v", crt, key, err)
			}
		}
	}
	if o.LeaderElect {
		lease, renew, retry := o.leaseTimings()
		switch {
		case retry <= 0:
			bad("leader-elect-retry-period", retry, "must be a positive duration such as 500ms")
		case renew <= time.Duration(leaderelection.JitterFactor*float64(retry)):
			bad("leader-elect-renew-deadline", renew, "must be more than %.1f times --leader-elect-retry-period (%s)", leaderelection.JitterFactor, retry)
		case lease < time.Second || lease%time.Second != 0:
			// The Lease keeps whole seconds: 1.5s would be written 1s, and a standby would
			// take over while this replica still renews and writes.
			bad("leader-elect-lease-duration", lease, "must be a whole number of seconds, at least 1s (the Lease object stores whole seconds)")
		case lease <= renew:
			bad("leader-elect-lease-duration", lease, "must be more than --leader-elect-renew-deadline (%s)", renew)
		}
	}
	known := o.knownStores()
	for _, s := range o.Stores {
		if !slices.Contains(known, s) {
			bad("stores", strings.Join(o.Stores, ","), "unknown store %q; known stores: %s", s, strings.Join(known, ", "))
		}
	}
	if err := validatePodGroupSources(o.PodGroupSources); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"pod-assumed-ttl", o.PodAssumedTTL}, {"period", o.Period}, {"reservation-ttl", o.ReservationTTL},
		{"reservation-default-ttl", o.ReservationDefaultTTL}, {"low-free-period", o.LowFreePeriod}} {
		if d.v <= 0 {
			bad(d.flag, d.v, "must be a positive duration such as 30s or 5m")
		}
	}
	if o.ReservationTTL > maxReservationTTL && !o.ReservationTTLAliasUsed() {
		// Used alone, the flag keeps its old meaning too (reservations' lifetime, with no
		// maximum): its hold is clamped then (holdTTL), not refused.
		bad("reservation-ttl", o.ReservationTTL, "must be at most %v (a Reservation's spec.ttlSeconds is at most 30 days)", maxReservationTTL)
	}
	if o.VerifyPeriod < 0 {
		bad("verify-period", o.VerifyPeriod, "must not be negative (0 disables the verify loop)")
	}
	if o.ReservationGCGrace < 0 {
		bad("reservation-gc-grace", o.ReservationGCGrace, "must not be negative")
	}
	if o.ComponentName == "" {
		bad("component-name", `""`, "must not be empty")
	}
	switch {
	case (o.SubClusterKey == "") != (o.SubCluster == ""):
		bad("sub-cluster", strconv.Quote(o.SubCluster), "--sub-cluster-key and --sub-cluster go together")
	case o.SubClusterKey != "":
		if msgs := validation.IsQualifiedName(o.SubClusterKey); len(msgs) > 0 {
			bad("sub-cluster-key", o.SubClusterKey, "not a label key: %s", strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(o.SubCluster); len(msgs) > 0 {
			bad("sub-cluster", o.SubCluster, "not a label value: %s", strings.Join(msgs, "; "))
		}
	}
	if math.IsNaN(o.LowFreeThreshold) || o.LowFreeThreshold < 0 || o.LowFreeThreshold >= 1 {
		bad("low-free-threshold", o.LowFreeThreshold, "must be a fraction in [0, 1)")
	}
	return errors.Join(errs...)
}

// maxReservationTTL is the longest --reservation-ttl: the Reservation that keeps a deleted
// pod's place carries it as spec.ttlSeconds, which the CRD caps at 30 days.
const maxReservationTTL = 30 * 24 * time.Hour

// ReservationTTLAliasUsed reports whether --reservation-ttl was given without
// --reservation-default-ttl, so that it also set the default lifetime of reservations
// without ttlSeconds, its meaning before reserve-on-delete (deprecated: the operator logs
// a warning at start).
func (o *Options) ReservationTTLAliasUsed() bool { return o.reservationTTLFlag && !o.defaultTTLFlag }

// holdTTL is how long a deleted pod's place is kept: --reservation-ttl, at most 30 days;
// clamped reports that --reservation-ttl, given alone for reservations' lifetime as before
// reserve-on-delete existed, was longer.
func (o *Options) holdTTL() (ttl time.Duration, clamped bool) {
	if o.ReservationTTL > maxReservationTTL {
		return maxReservationTTL, true
	}
	return o.ReservationTTL, false
}

// ttlFlag is --reservation-ttl (alias) or --reservation-default-ttl. The two meanings of
// --reservation-ttl coexist this way: it always sets the deleted pods' hold, and also the
// default lifetime unless --reservation-default-ttl is given, whatever the order of the
// two on the command line. A deployment that set --reservation-ttl for its reservations
// keeps their lifetime after an upgrade; the hold it now also sets is used only by pods
// that ask for it.
type ttlFlag struct {
	o *Options
	// alias: this is --reservation-ttl.
	alias bool
}

// String implements flag.Value.
func (f *ttlFlag) String() string {
	if f.o == nil {
		return ""
	}
	if f.alias {
		return f.o.ReservationTTL.String()
	}
	return f.o.ReservationDefaultTTL.String()
}

// Set implements flag.Value.
func (f *ttlFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration such as 30s or 10m: %w", err)
	}
	switch {
	case !f.alias:
		f.o.ReservationDefaultTTL, f.o.defaultTTLFlag = d, true
	case f.o.defaultTTLFlag:
		f.o.ReservationTTL, f.o.reservationTTLFlag = d, true
	default:
		f.o.ReservationTTL, f.o.ReservationDefaultTTL, f.o.reservationTTLFlag = d, d, true
	}
	return nil
}

// validateBindAddress accepts "0" (disabled) or host:port with a port in 0..65535.
func validateBindAddress(addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf(`want host:port (e.g. ":8080") or "0" to disable: %w`, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number between 0 and 65535", port)
	}
	return nil
}

func names(ns []stores.Name) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// The leader-election timings used where Options leaves them nil: controller-runtime's lease
// duration and renew deadline, and a retry period of 500 ms instead of its 2 s, so that a
// standby's polls (every 1 to 2.2 retry periods) take over within about a second of the
// lease's expiry (docs/RELIABILITY.md, "Failover").
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 500 * time.Millisecond
)

// leaseTimings returns the lease duration, renew deadline and retry period in effect.
func (o *Options) leaseTimings() (lease, renew, retry time.Duration) {
	return ptr.Deref(o.LeaseDuration, defaultLeaseDuration), ptr.Deref(o.RenewDeadline, defaultRenewDeadline),
		ptr.Deref(o.RetryPeriod, defaultRetryPeriod)
}

// optionalDuration is the flag of an optional duration: unset, the option stays nil and its
// default applies.
type optionalDuration struct {
	p   **time.Duration
	def time.Duration
}

func (d optionalDuration) String() string {
	if d.p == nil || *d.p == nil {
		return d.def.String()
	}
	return (**d.p).String()
}

func (d optionalDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d.p = &v
	return nil
}
