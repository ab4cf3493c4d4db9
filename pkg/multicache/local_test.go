package multicache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBanner_SaysWhereToLookAndWhatToTry checks the banner --local prints once caught up,
// for each way --debug-bind-address can be set.
func TestBanner_SaysWhereToLookAndWhatToTry(t *testing.T) {
	st := localState{kubeconfig: "/tmp/x/kubeconfig", node: "node-a"}
	for _, tc := range []struct {
		name, debug string
		want, not   []string
	}{
		{"default", "127.0.0.1:8082", []string{
			"export KUBECONFIG=/tmp/x/kubeconfig",
			"debug dump: http://127.0.0.1:8082/debug/cache\n",
			"kubectl --kubeconfig /tmp/x/kubeconfig get multicache -A\n",
			"curl 127.0.0.1:8082/debug/cache/nodes/node-a\n",
			"curl 127.0.0.1:8082/debug/cache/compare\n",
		}, nil},
		{"all interfaces", ":9000", []string{"curl localhost:9000/debug/cache/compare"}, nil},
		{"ipv6", "[::1]:9000", []string{"curl [::1]:9000/debug/cache/compare"}, nil},
		{"disabled", "0", []string{"get multicache -A"}, []string{"curl", "debug dump"}},
		{"unparsable", "nonsense", []string{"get multicache -A"}, []string{"curl", "debug dump"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := banner(st, tc.debug)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("banner misses %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("banner has %q:\n%s", n, got)
				}
			}
			if lines := strings.Count(got, "\n"); lines > 10 {
				t.Errorf("banner is %d lines; keep it short:\n%s", lines, got)
			}
		})
	}
	if got := banner(localState{kubeconfig: "k"}, "127.0.0.1:1"); !strings.Contains(got, "/debug/cache/nodes/<node>") {
		t.Errorf("without a sample node the banner should show a placeholder:\n%s", got)
	}
}

// TestBanner_SaysHowToReadTheMetrics: `make run` serves them plainly on loopback, and the
// banner gives the curl line; served securely, the banner says how to read them plainly.
func TestBanner_SaysHowToReadTheMetrics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		st        localState
		want, not []string
	}{
		{"plain", localState{metricsAddr: "127.0.0.1:8080"},
			[]string{"curl -s 127.0.0.1:8080/metrics | grep ^multicache_\n"}, []string{"token"}},
		{"secure", localState{metricsAddr: ":8443", metricsSecure: true},
			[]string{"https://localhost:8443/metrics needs a token", "--metrics-secure=false"}, []string{"curl -s"}},
		{"off", localState{metricsAddr: "0"}, nil, []string{"metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := banner(tc.st, "127.0.0.1:8082")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("banner misses %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("banner has %q:\n%s", n, got)
				}
			}
		})
	}
}

// TestKubectlCommand_FallsBackToTheBuiltOne: without kubectl on PATH the banner shows the
// one `make kubectl` built in the assets directory.
func TestKubectlCommand_FallsBackToTheBuiltOne(t *testing.T) {
	assets := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	if got := kubectlCommand(assets); got != "kubectl" {
		t.Errorf("nothing built: %q, want kubectl", got)
	}
	built := filepath.Join(assets, "kubectl")
	if err := os.WriteFile(built, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := kubectlCommand(assets); got != built {
		t.Errorf("built, none on PATH: %q, want %s", got, built)
	}
	if got := banner(localState{kubeconfig: "k", kubectl: built}, "0"); !strings.Contains(got, built+" --kubeconfig k get multicache -A") {
		t.Errorf("the banner does not use the built kubectl:\n%s", got)
	}
}
