package plugin

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Args are the plugin's arguments, from the pluginConfig of a profile (no apiVersion or
// kind needed):
//
//	pluginConfig:
//	- name: Multicache
//	  args:
//	    permitWaitingTimeSeconds: 60
//	    leaderWork: true
//	    multicacheFlags: ["--reservation-ttl=5m", "--debug-bind-address=127.0.0.1:8082"]
//
// Every profile of one process shares one cache: profiles that give the plugin different
// leaderWork or multicacheFlags are refused.
type Args struct {
	// PermitWaitingTimeSeconds is how long a member of a pod group waits at Permit, placed
	// but not bound, for minMember members to be placed; then the placed members are
	// rejected, all of them, and tried again. A group's own spec.scheduleTimeoutSeconds
	// (multicache's or scheduler-plugins' PodGroup) wins. Default 60, as coscheduling's.
	PermitWaitingTimeSeconds *int64 `json:"permitWaitingTimeSeconds,omitempty"`
	// LeaderWork runs multicache's leader-only work (status of PodGroups, Reservations and
	// Movements, the reaper that expires reservations and turns deleted pods' holds into
	// Reservation objects) in the scheduler replica that leads. Default true: the scheduler
	// is then all of multicache a cluster needs. Set it false when multicache's operator
	// Deployment runs beside the scheduler and writes instead.
	LeaderWork *bool `json:"leaderWork,omitempty"`
	// MulticacheFlags are multicache's command-line flags for the cache (`multicache -h`
	// lists them), after the scheduler's defaults: --leader-elect=false (the scheduler's
	// election is the one, and the flag cannot be turned on), --metrics-bind-address=0,
	// --health-probe-bind-address=0 and --debug-bind-address=0 (the scheduler serves its
	// own; give an address to serve multicache's).
	MulticacheFlags []string `json:"multicacheFlags,omitempty"`
}

// DefaultPermitWaitingTimeSeconds is Args.PermitWaitingTimeSeconds's default.
const DefaultPermitWaitingTimeSeconds = 60

// embeddedFlags come before Args.MulticacheFlags (a later flag wins).
var embeddedFlags = []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0"}

// DecodeArgs reads a profile's args for the plugin (nil: none given) and applies the
// defaults; an error names what to fix.
func DecodeArgs(obj runtime.Object) (Args, error) {
	var args Args
	switch a := obj.(type) {
	case nil:
	case *Args:
		args = *a
	default:
		if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
			return Args{}, fmt.Errorf("decoding the %s plugin's args: %w", Name, err)
		}
	}
	if args.PermitWaitingTimeSeconds == nil {
		d := int64(DefaultPermitWaitingTimeSeconds)
		args.PermitWaitingTimeSeconds = &d
	}
	if *args.PermitWaitingTimeSeconds <= 0 {
		return Args{}, fmt.Errorf("%s plugin: permitWaitingTimeSeconds=%d: must be positive", Name, *args.PermitWaitingTimeSeconds)
	}
	if args.LeaderWork == nil {
		on := true
		args.LeaderWork = &on
	}
	for _, f := range args.MulticacheFlags {
		if f == "--leader-elect" || f == "--leader-elect=true" {
			return Args{}, fmt.Errorf("%s plugin: multicacheFlags: %s: the scheduler's leader election is the process's only one", Name, f)
		}
	}
	return args, nil
}

// DeepCopyObject implements runtime.Object, so that Args can be given as a profile's args
// in code.
func (a *Args) DeepCopyObject() runtime.Object {
	out := *a
	out.MulticacheFlags = slices.Clone(a.MulticacheFlags)
	return &out
}

// GetObjectKind implements runtime.Object.
func (a *Args) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// permitTimeout is PermitWaitingTimeSeconds as a duration.
func (a Args) permitTimeout() time.Duration {
	return time.Duration(*a.PermitWaitingTimeSeconds) * time.Second
}

// flags are the cache's command line.
func (a Args) flags() []string { return append(slices.Clone(embeddedFlags), a.MulticacheFlags...) }
