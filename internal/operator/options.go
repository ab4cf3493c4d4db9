// Package operator wires multicache together: the manager, the cache handler and its stores,
// the reconcilers, the status writers, the reaper and the servers. main.go turns flags into
// Options and calls Run; the end-to-end tests call New to run the same wiring in-process.
package operator

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
)

// Options configure the operator. DefaultOptions documents every default; flags override.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics; "0" disables.
	MetricsBindAddress string
	// MetricsSecure serves metrics over HTTPS with authentication and authorization.
	MetricsSecure bool
	// HealthProbeBindAddress serves /healthz and /readyz.
	HealthProbeBindAddress string
	// LeaderElect makes one replica the leader; only the leader writes status.
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease. Empty: the pod's namespace in a cluster,
	// "default" outside one.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease.
	LeaderElectionID string
}

// DefaultOptions returns the options used when no flag is given.
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     ":8443",
		MetricsSecure:          true,
		HealthProbeBindAddress: ":8081",
		LeaderElectionID:       "multicache.cache.multicache.dev",
	}
}

// BindFlags registers one flag per option on fs, with the current values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		`Address the metrics endpoint binds to, e.g. ":8443"; "0" disables it.`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve metrics over HTTPS, allowing only callers the API server authorizes to get /metrics.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		`Address /healthz and /readyz bind to; "0" disables them.`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader among replicas: every replica keeps its cache warm, only the leader writes status.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		`Namespace of the leader-election Lease (default: the pod's namespace, or "default" outside a cluster).`)
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID,
		"Name of the leader-election Lease.")
}

// Validate returns an error naming the first flag whose value cannot work.
func (o *Options) Validate() error {
	var errs []error
	for flagName, addr := range map[string]string{
		"metrics-bind-address":      o.MetricsBindAddress,
		"health-probe-bind-address": o.HealthProbeBindAddress,
	} {
		if err := validateBindAddress(addr); err != nil {
			errs = append(errs, fmt.Errorf("--%s=%q: %w", flagName, addr, err))
		}
	}
	if o.LeaderElect && o.LeaderElectionID == "" {
		errs = append(errs, errors.New("--leader-election-id must not be empty when --leader-elect is set"))
	}
	return errors.Join(errs...)
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
