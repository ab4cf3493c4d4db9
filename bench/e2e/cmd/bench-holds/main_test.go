package main

import (
	"strings"
	"testing"
)

// TestRun_ABadFlagFailsBeforeAnythingStarts: each bad flag is refused with an error naming
// it, before the control plane starts (the binaries named do not exist).
func TestRun_ABadFlagFailsBeforeAnythingStarts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-assets", ""}, "-assets (or KUBEBUILDER_ASSETS) and -multicache are required"},
		{[]string{"-pod-cpu", "lots"}, `-pod-cpu: "lots" is not a quantity`},
		{[]string{"-max-surge", "some"}, `-max-surge: "some" is neither a number of pods nor a percentage`},
		{[]string{"-scale-to", "500"}, "-scale-to (500) between 0 and fewer than -replicas"},
		{[]string{"-force-delete", "300"}, "-force-delete: 300 is not between 0 and -scale-to (250)"},
		{[]string{"-settle", "1s"}, "-settle: 1s must be longer than"},
		{[]string{"-controller-qps", "0"}, "-controller-qps: 0 must be positive"},
		{[]string{"-sample", "0s"}, "-sample: 0s must be at least 1ms"},
		{[]string{"-phase-timeout", "0s"}, "-phase-timeout: 0s must be at least 1s"},
		{[]string{"-delete-delay", "-1s"}, "-delete-delay: -1s must be at least 0s"},
		{[]string{"-kube-scheduler", "/nonexistent/kube-scheduler"}, "/nonexistent/kube-scheduler"},
		{[]string{"-no-such-flag"}, "usage: flag provided but not defined: -no-such-flag"},
		{[]string{"-h"}, "flag: help requested"}, // main exits 0
	} {
		args := append([]string{"-assets", "/nonexistent", "-multicache", "/nonexistent/multicache"}, c.args...)
		err := run(args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
