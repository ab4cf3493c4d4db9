package operator

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/siblings/freecapacity"
)

func TestOptions_DefaultsAreValidAndEnableEveryStore(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"nodes", "podgroups", "pdbs", "movements", "reservations", "devices", "pods"}; !slices.Equal(o.Stores, want) {
		t.Errorf("default stores %v", o.Stores)
	}
	if o.DebugBindAddress != "127.0.0.1:8082" {
		t.Errorf("the debug server must default to localhost, got %q", o.DebugBindAddress)
	}
}

func TestOptions_BadValuesAreRejectedNamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--stores=nodes,quotas"}, "--stores"},
		{[]string{"--pod-assumed-ttl=0s"}, "--pod-assumed-ttl"},
		{[]string{"--period=-1s"}, "--period"},
		{[]string{"--reservation-ttl=0"}, "--reservation-ttl"},
		{[]string{"--reservation-ttl=-5m"}, "--reservation-ttl"},
		{[]string{"--reservation-ttl=721h", "--reservation-default-ttl=1h"}, "--reservation-ttl"},
		{[]string{"--reservation-default-ttl=-1m"}, "--reservation-default-ttl"},
		{[]string{"--reservation-ttl=-1m", "--reservation-default-ttl=1h"}, "--reservation-ttl"},
		{[]string{"--reservation-gc-grace=-5m"}, "--reservation-gc-grace"},
		{[]string{"--component-name="}, "--component-name"},
		{[]string{"--sub-cluster-key=zone"}, "--sub-cluster"},
		{[]string{"--sub-cluster-key=bad key!", "--sub-cluster=a"}, "--sub-cluster-key"},
		{[]string{"--sub-cluster-key=zone", "--sub-cluster=not/a/value"}, "--sub-cluster"},
		{[]string{"--debug-bind-address=localhost"}, "--debug-bind-address"},
		{[]string{"--metrics-bind-address=:70000"}, "--metrics-bind-address"},
		{[]string{"--low-free-threshold=1.5"}, "--low-free-threshold"},
		{[]string{"--low-free-threshold=NaN"}, "--low-free-threshold"},
		{[]string{"--leader-elect", "--leader-election-id="}, "--leader-election-id"},
		{[]string{"--leader-elect", "--leader-election-id=Bad_ID"}, "--leader-election-id"},
		{[]string{"--verify-period=-1m"}, "--verify-period"},
		{[]string{"--metrics-cert-path=/nonexistent"}, "--metrics-cert-path"},
		{[]string{"--metrics-cert-path=.", "--metrics-cert-name=options.go", "--metrics-cert-key=options.go"}, "--metrics-cert-path"},
		{[]string{"--metrics-cert-path=/nonexistent", "--metrics-secure=false"}, "--metrics-cert-path"},
		{[]string{"--leader-elect", "--leader-elect-lease-duration=10s"}, "--leader-elect-lease-duration"},
		{[]string{"--leader-elect", "--leader-elect-lease-duration=1500ms", "--leader-elect-renew-deadline=1200ms", "--leader-elect-retry-period=200ms"}, "--leader-elect-lease-duration"},
		{[]string{"--leader-elect", "--leader-elect-lease-duration=900ms", "--leader-elect-renew-deadline=600ms", "--leader-elect-retry-period=100ms"}, "--leader-elect-lease-duration"},
		{[]string{"--leader-elect", "--leader-elect-renew-deadline=600ms"}, "--leader-elect-renew-deadline"},
		{[]string{"--leader-elect", "--leader-elect-retry-period=0s"}, "--leader-elect-retry-period"},
		{[]string{"--podgroup-sources=multicache,volcano"}, "--podgroup-sources"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := DefaultOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.flag+"=") {
				t.Errorf("error %v does not name %s", err, tc.flag)
			}
		})
	}
}

// TestOptions_ReservationTTLKeepsItsOldMeaningUnlessTheNewFlagIsGiven: --reservation-ttl is
// the deleted pods' hold, and also the default lifetime of reservations (its meaning
// before) unless --reservation-default-ttl is given, in either order.
func TestOptions_ReservationTTLKeepsItsOldMeaningUnlessTheNewFlagIsGiven(t *testing.T) {
	for _, tc := range []struct {
		args             []string
		hold, defaultTTL time.Duration
		aliasUsed        bool
	}{
		{nil, 10 * time.Minute, 10 * time.Minute, false},
		{[]string{"--reservation-ttl=3m"}, 3 * time.Minute, 3 * time.Minute, true},
		{[]string{"--reservation-default-ttl=1h"}, 10 * time.Minute, time.Hour, false},
		{[]string{"--reservation-ttl=3m", "--reservation-default-ttl=1h"}, 3 * time.Minute, time.Hour, false},
		{[]string{"--reservation-default-ttl=1h", "--reservation-ttl=3m"}, 3 * time.Minute, time.Hour, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := DefaultOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if o.ReservationTTL != tc.hold || o.ReservationDefaultTTL != tc.defaultTTL || o.ReservationTTLAliasUsed() != tc.aliasUsed {
				t.Errorf("hold %v default %v alias %v, want %v %v %v", o.ReservationTTL, o.ReservationDefaultTTL,
					o.ReservationTTLAliasUsed(), tc.hold, tc.defaultTTL, tc.aliasUsed)
			}
		})
	}
	// Alone, as before reserve-on-delete existed, a lifetime past the longest hold is kept
	// for reservations and clamped for holds, not refused at start-up.
	o := DefaultOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--reservation-ttl=1000h"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("--reservation-ttl=1000h alone: %v, want it accepted", err)
	}
	if hold, clamped := o.holdTTL(); hold != maxReservationTTL || !clamped || o.ReservationDefaultTTL != 1000*time.Hour {
		t.Errorf("--reservation-ttl=1000h alone: hold %v (clamped %v), default %v; want %v, true, 1000h", hold, clamped, o.ReservationDefaultTTL, maxReservationTTL)
	}
	o = DefaultOptions()
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--reservation-default-ttl=ten minutes"}); err == nil || !strings.Contains(err.Error(), "reservation-default-ttl") ||
		!strings.Contains(err.Error(), "duration such as") {
		t.Errorf("a malformed duration: %v, want an error naming the flag and the format", err)
	}
}

func TestOptions_FlagsSetEveryOption(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	err := fs.Parse([]string{"--stores=reservations, podgroups", "--pod-assumed-ttl=1m", "--period=2s", "--reservation-ttl=3m",
		"--reservation-default-ttl=5m", "--reservation-gc-grace=4m", "--component-name=c", "--scheduler-name=s", "--sub-cluster-key=zone", "--sub-cluster=a",
		"--debug-bind-address=0", "--low-free-threshold=0", "--verify-period=0", "--podgroup-sources=native, scheduler-plugins",
		"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=5s", "--leader-elect-retry-period=1s", "--dra-node-allocatable-resources", "--trim-at-decode=false", "--whole-pods"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Stores, []string{"reservations", "podgroups"}) || o.PodAssumedTTL != time.Minute || o.Period != 2*time.Second ||
		o.ReservationTTL != 3*time.Minute || o.ReservationDefaultTTL != 5*time.Minute || o.ReservationGCGrace != 4*time.Minute || o.ComponentName != "c" || o.SchedulerName != "s" ||
		o.SubClusterKey != "zone" || o.SubCluster != "a" || o.DebugBindAddress != "0" || o.LowFreeThreshold != 0 || o.VerifyPeriod != 0 ||
		*o.LeaseDuration != 6*time.Second || *o.RenewDeadline != 5*time.Second || *o.RetryPeriod != time.Second ||
		!slices.Equal(o.PodGroupSources, []string{"native", "scheduler-plugins"}) || !o.DRANodeAllocatableResources || o.TrimAtDecode || !o.WholePods {
		t.Errorf("options %+v", o)
	}
}

// TestREADME_FlagsAndMetricsTablesMatchTheCode keeps the README's tables honest: every flag
// the binary defines (but the zap logging ones) is in the flags table and nothing else is;
// every metric the operator registers is in the metrics table and nothing else is.
func TestREADME_FlagsAndMetricsTablesMatchTheCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := func(section, prefix string) map[string]bool {
		out := map[string]bool{}
		in := false
		for _, line := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(line, "## ") {
				in = line == "## "+section
				continue
			}
			if !in || !strings.HasPrefix(line, "| `"+prefix) {
				continue
			}
			cell := strings.SplitN(line, "|", 3)[1]
			for _, m := range regexp.MustCompile("`"+regexp.QuoteMeta(prefix)+`([a-z0-9_-]+)`).FindAllStringSubmatch(cell, -1) {
				out[m[1]] = true
			}
		}
		return out
	}

	flags := documented("Flags", "--")
	o := DefaultOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	// Defined by the command (pkg/multicache): the client's and --local's flags, --version
	// and the process's --steady-gogc.
	defined := map[string]bool{"kubeconfig": true, "local": true, "local-assets": true, "local-dir": true, "local-apply": true,
		"version": true, "steady-gogc": true}
	fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = true })
	for name := range defined {
		if !flags[name] {
			t.Errorf("flag --%s is not in the README's flags table", name)
		}
	}
	for name := range flags {
		if !defined[name] {
			t.Errorf("the README documents --%s, which no code defines", name)
		}
	}

	documentedMetrics := documented("Metrics", "multicache_")
	registered := map[string]bool{}
	descs := make(chan *prometheus.Desc, 64)
	go func() {
		// What registerMetrics registers.
		for _, c := range append(metrics.All(), freecapacity.LowNodes, handler.NewCollector(nil)) {
			c.Describe(descs)
		}
		close(descs)
	}()
	for d := range descs {
		if m := regexp.MustCompile(`fqName: "multicache_([a-z0-9_]+)"`).FindStringSubmatch(d.String()); m != nil {
			registered[m[1]] = true
		}
	}
	for name := range registered {
		if !documentedMetrics[name] {
			t.Errorf("metric multicache_%s is not in the README's metrics table", name)
		}
	}
	for name := range documentedMetrics {
		if !registered[name] {
			t.Errorf("the README documents multicache_%s, which is not registered", name)
		}
	}
}
