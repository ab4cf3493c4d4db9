package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRun_BadUsageSaysWhatToFix checks every usage error: exit code 2 and a message
// naming what to change.
func TestRun_BadUsageSaysWhatToFix(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"node"}, "node takes one argument"},
		{[]string{"nodes", "extra"}, "nodes takes no arguments"},
		{[]string{"nodes", "--assumed"}, "--assumed applies to the pods command only"},
		{[]string{"nodes", "--timeout=0s"}, "--timeout=0s"},
		{[]string{"nodes", "--debug-port=0"}, "--debug-port=0"},
		{[]string{"nodes", "--debug-url=ftp://x"}, `--debug-url="ftp://x"`},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut); code != exitUsage {
			t.Errorf("%v: exit code %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: stderr %q does not say %q", tc.args, errOut.String(), tc.want)
		}
	}
}

// TestRun_UnreachableDebugURLNamesIt checks that a debug server that does not answer is
// named in the error.
func TestRun_UnreachableDebugURLNamesIt(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"nodes", "--debug-url=http://127.0.0.1:1", "--timeout=2s"}, &out, &errOut); code != exitFail {
		t.Errorf("exit code %d, want %d", code, exitFail)
	}
	if !strings.Contains(errOut.String(), "http://127.0.0.1:1") {
		t.Errorf("stderr %q does not name the debug URL", errOut.String())
	}
}
