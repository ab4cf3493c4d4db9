package chaos

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config sizes and paces one chaos run. Short() is what `go test ./...` runs (a couple of
// minutes on two cores); `make chaos` sets the CHAOS_* variables (FromEnv).
type Config struct {
	// Duration is how long the random phase injects faults after the first pass, which
	// injects every kind once in a fixed order.
	Duration time.Duration
	// MinFaults: the random phase goes on until at least this many faults were injected.
	MinFaults int
	// Nodes and Pods are the cluster populated before the operators start.
	Nodes, Pods int
	// BaseReservations are created with the population (Reserved, long TTL).
	BaseReservations int
	// BurstReservations expire in the same second while BurstPods are deleted at once.
	BurstReservations, BurstPods int
	// Rate is the workload's operations per second; Workers run them.
	Rate    float64
	Workers int
	// Seed drives every random choice of the suite (the operators' clocks do not follow it).
	Seed uint64
	// Race builds the operator with the race detector.
	Race bool
	// OutDir keeps the operators' logs and write logs (default: a temporary directory).
	OutDir string
	// Report, when set, receives the results as Markdown.
	Report string
	// OperatorArgs are added to both operators' flags (CHAOS_OPERATOR_ARGS, split at
	// spaces), e.g. --zap-log-level=4 to log client-go's reflectors.
	OperatorArgs []string
	// RecoveryBound is how long the comparison may stay non-empty after a fault healed
	// before the run fails: a correctness bound, not a performance target.
	RecoveryBound time.Duration
	// LoadMin and LoadMax bound the load before each fault.
	LoadMin, LoadMax time.Duration

	// Operator timings.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	PodAssumedTTL, SlowBind                   time.Duration
	Period, VerifyPeriod                      time.Duration
	ReservationTTL, ReservationGCGrace        time.Duration
}

// Short is the configuration of the test `make test` runs.
func Short() Config {
	return Config{
		Duration: 0, MinFaults: 8,
		Nodes: 12, Pods: 240, BaseReservations: 24,
		BurstReservations: 150, BurstPods: 150,
		Rate: 25, Workers: 4, Seed: 1,
		RecoveryBound: 60 * time.Second,
		LoadMin:       300 * time.Millisecond, LoadMax: time.Second,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		PodAssumedTTL: 2 * time.Second, SlowBind: 4 * time.Second,
		Period: 250 * time.Millisecond, VerifyPeriod: 4 * time.Second,
		ReservationTTL: 120 * time.Second, ReservationGCGrace: 6 * time.Second,
	}
}

// Long is the default of `make chaos` (each field can be changed by its variable).
func Long() Config {
	c := Short()
	c.Duration, c.MinFaults = 10*time.Minute, 50
	c.Nodes, c.Pods, c.BaseReservations = 1000, 30000, 2000
	c.BurstReservations, c.BurstPods = 10000, 5000
	c.Rate, c.Workers = 100, 8
	c.RecoveryBound = 5 * time.Minute
	c.LoadMin, c.LoadMax = 2*time.Second, 6*time.Second
	// An API server restart at full size is down longer than a short renew deadline.
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 6*time.Second, 5*time.Second, 500*time.Millisecond
	c.ReservationGCGrace = 10 * time.Second
	return c
}

// FromEnv returns Short, or Long when CHAOS_LONG=true, changed by the CHAOS_* variables:
// CHAOS_TIME, CHAOS_MIN_FAULTS, CHAOS_NODES, CHAOS_PODS, CHAOS_RESERVATIONS,
// CHAOS_BURST_RESERVATIONS, CHAOS_BURST_PODS, CHAOS_RATE, CHAOS_SEED, CHAOS_RACE,
// CHAOS_OUT, CHAOS_REPORT, CHAOS_OPERATOR_ARGS.
func FromEnv() (Config, error) {
	c := Short()
	if os.Getenv("CHAOS_LONG") == "true" {
		c = Long()
	}
	var errs []string
	for name, into := range map[string]any{
		"CHAOS_TIME": &c.Duration, "CHAOS_MIN_FAULTS": &c.MinFaults, "CHAOS_NODES": &c.Nodes, "CHAOS_PODS": &c.Pods,
		"CHAOS_RESERVATIONS": &c.BaseReservations, "CHAOS_BURST_RESERVATIONS": &c.BurstReservations,
		"CHAOS_BURST_PODS": &c.BurstPods, "CHAOS_RATE": &c.Rate, "CHAOS_SEED": &c.Seed,
	} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		var err error
		switch p := into.(type) {
		case *time.Duration:
			*p, err = time.ParseDuration(v)
		case *int:
			if *p, err = strconv.Atoi(v); err == nil && *p < 0 {
				err = errors.New("want a number >= 0")
			}
		case *float64:
			if *p, err = strconv.ParseFloat(v, 64); err == nil && *p <= 0 {
				err = errors.New("want a positive number")
			}
		case *uint64:
			*p, err = strconv.ParseUint(v, 10, 64)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: %v", name, v, err))
		}
	}
	if v := os.Getenv("CHAOS_RACE"); v != "" {
		c.Race = v == "true" || v == "1"
	}
	c.OutDir, c.Report = os.Getenv("CHAOS_OUT"), os.Getenv("CHAOS_REPORT")
	c.OperatorArgs = strings.Fields(os.Getenv("CHAOS_OPERATOR_ARGS"))
	if c.Nodes < 4 {
		errs = append(errs, "CHAOS_NODES: want at least 4 nodes")
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return c, fmt.Errorf("chaos configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// String is the configuration as one line for the log and the report.
func (c Config) String() string {
	return fmt.Sprintf("nodes=%d pods=%d reservations=%d burst=%d reservations/%d pods, random phase %v (at least %d faults), "+
		"rate %.0f ops/s, seed %d, race %v; lease %v/%v/%v, pod-assumed-ttl %v, slow bind %v, verify every %v",
		c.Nodes, c.Pods, c.BaseReservations, c.BurstReservations, c.BurstPods, c.Duration, c.MinFaults,
		c.Rate, c.Seed, c.Race, c.LeaseDuration, c.RenewDeadline, c.RetryPeriod, c.PodAssumedTTL, c.SlowBind, c.VerifyPeriod)
}
