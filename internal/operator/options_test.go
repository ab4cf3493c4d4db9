package operator

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOptions_DefaultsAreValidAndEnableEveryStore(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"nodes", "podgroups", "pdbs", "movements", "reservations", "pods"}; !slices.Equal(o.Stores, want) {
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

func TestOptions_FlagsSetEveryOption(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	err := fs.Parse([]string{"--stores=reservations, podgroups", "--pod-assumed-ttl=1m", "--period=2s", "--reservation-ttl=3m",
		"--reservation-gc-grace=4m", "--component-name=c", "--scheduler-name=s", "--sub-cluster-key=zone", "--sub-cluster=a",
		"--debug-bind-address=0", "--low-free-threshold=0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Stores, []string{"reservations", "podgroups"}) || o.PodAssumedTTL != time.Minute || o.Period != 2*time.Second ||
		o.ReservationTTL != 3*time.Minute || o.ReservationGCGrace != 4*time.Minute || o.ComponentName != "c" || o.SchedulerName != "s" ||
		o.SubClusterKey != "zone" || o.SubCluster != "a" || o.DebugBindAddress != "0" || o.LowFreeThreshold != 0 {
		t.Errorf("options %+v", o)
	}
}
