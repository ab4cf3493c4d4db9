package multicache

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// thresholdSettings are a sibling's settings: one flag, validated.
type thresholdSettings struct {
	flagName  string
	threshold int
}

func (s *thresholdSettings) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.threshold, s.flagName, 20, "CPU percent under which a node is underused.")
}

func (s *thresholdSettings) Validate() error {
	if s.threshold < 0 || s.threshold > 100 {
		return fmt.Errorf("--%s=%d: must be a percent, 0 to 100", s.flagName, s.threshold)
	}
	return nil
}

var quietPorts = []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0"}

func TestSiblingSettings_AreFlagsInHelpAndReachTheFactoryTyped(t *testing.T) {
	settings := &thresholdSettings{flagName: "descheduler-threshold"}
	var got *thresholdSettings
	var deps SiblingDeps
	cmd := NewCommand(WithSiblingSettings(settings, func(d SiblingDeps, s *thresholdSettings) (Sibling, error) {
		got, deps = s, d
		return nil, nil
	}))

	_, err := cmd.parse([]string{"-h"})
	var help helpRequested
	if !errors.As(err, &help) {
		t.Fatalf("-h: %v, want the usage", err)
	}
	var usage bytes.Buffer
	help.print(&usage)
	if !strings.Contains(usage.String(), "-descheduler-threshold") || !strings.Contains(usage.String(), "underused") {
		t.Errorf("--help does not list the sibling's flag:\n%s", usage.String())
	}

	opts, err := cmd.Options(append([]string{"--descheduler-threshold=35", "--dra-node-allocatable-resources"}, quietPorts...))
	if err != nil {
		t.Fatal(err)
	}
	opts.SetSkipControllerNameValidation(true)
	if _, err := New(env.Config, opts); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.threshold != 35 {
		t.Fatalf("the factory got settings %+v, want the parsed threshold 35", got)
	}
	if want := (store.Accounting{DRANodeAllocatableResources: true}); deps.Accounting != want {
		t.Errorf("SiblingDeps.Accounting = %+v, want the cache's %+v", deps.Accounting, want)
	}
}

func TestSiblingSettings_BadValuesAndTakenNamesAreErrorsNamingTheFlag(t *testing.T) {
	factory := func(SiblingDeps, *thresholdSettings) (Sibling, error) { return nil, nil }
	for name, tc := range map[string]struct {
		opts []Option
		args []string
		want string
	}{
		"out of range": {
			opts: []Option{WithSiblingSettings(&thresholdSettings{flagName: "descheduler-threshold"}, factory)},
			args: []string{"--descheduler-threshold=120"},
			want: "--descheduler-threshold=120: must be a percent",
		},
		"not a number": {
			opts: []Option{WithSiblingSettings(&thresholdSettings{flagName: "descheduler-threshold"}, factory)},
			args: []string{"--descheduler-threshold=lots"},
			want: "descheduler-threshold",
		},
		"multicache's flag": {
			opts: []Option{WithSiblingSettings(&thresholdSettings{flagName: "stores"}, factory)},
			want: "define --stores, which is already defined",
		},
		"another sibling's flag": {
			opts: []Option{
				WithSiblingSettings(&thresholdSettings{flagName: "threshold"}, factory),
				WithSiblingSettings(&thresholdSettings{flagName: "threshold"}, factory),
			},
			want: "define --threshold, which is already defined",
		},
		"no factory": {
			opts: []Option{WithSiblingSettings[*thresholdSettings](&thresholdSettings{flagName: "x"}, nil)},
			want: "sibling 0 has no factory",
		},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand(tc.opts...)
			if _, err := cmd.Options(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
			if code := cmd.Run(tc.args); code != exitBadFlags {
				t.Errorf("Run exit code %d, want %d", code, exitBadFlags)
			}
		})
	}
}
