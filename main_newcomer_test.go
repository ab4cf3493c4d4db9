package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
)

// runOperator runs the operator with args and env (added to the test's) to its end and
// returns its exit code and output.
func runOperator(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(buildOperator(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestBinary_AFlagErrorIsPrintedAloneWithAHint: the error is the last thing on the screen,
// with a pointer to --help, not followed by every flag's usage.
func TestBinary_AFlagErrorIsPrintedAloneWithAHint(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--bogus-flag", "flag provided but not defined: -bogus-flag"},
		{"--period=abc", `invalid value "abc" for flag -period`},
		{"--stores=nodes,quotas", "--stores"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			code, stdout, stderr := runOperator(t, nil, tc.arg)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], tc.want) || lines[1] != "Run 'multicache --help' for usage." {
				t.Errorf("stderr is not the error naming %q and the --help hint:\n%s", tc.want, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
		})
	}
	code, stdout, _ := runOperator(t, nil, "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: multicache [flags]") || !strings.Contains(stdout, "-period duration") {
		t.Errorf("--help: exit code %d, want 0 and the usage on stdout:\n%s", code, stdout)
	}
}

// TestBinary_NoClusterIsOneLineWithoutStackTraces: neither a kubeconfig nor in-cluster
// configuration: one line saying what to do, no JSON log with a stack trace before it.
func TestBinary_NoClusterIsOneLineWithoutStackTraces(t *testing.T) {
	noCluster := []string{"KUBECONFIG=", "KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=", "HOME=" + t.TempDir()}
	code, stdout, stderr := runOperator(t, noCluster, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	out := strings.TrimSpace(stdout + stderr)
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, "no cluster configured: pass --kubeconfig, set KUBECONFIG, or use --local") {
		t.Errorf("want one line saying how to configure a cluster, got:\n%s", out)
	}
	if strings.Contains(out, "stacktrace") || strings.Contains(out, "{") {
		t.Errorf("the output has a structured log or a stack trace:\n%s", out)
	}

	code, _, stderr = runOperator(t, noCluster, "--kubeconfig="+filepath.Join(t.TempDir(), "missing"))
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "missing") {
		t.Errorf("a missing --kubeconfig: exit code %d, want 1 and one line naming the file:\n%s", code, stderr)
	}
}

// TestBinary_ASecondLocalRunChangesNothing is a second `make run` while one runs: it stops
// before it starts a control plane or rewrites the kubeconfig, and says which run is in
// the way; a port in use is named by its flag the same way.
func TestBinary_ASecondLocalRunChangesNothing(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("the first run's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	assets := "--local-assets=" + filepath.Join(env.RepoRoot, "bin", "k8s")
	lock, err := controlplane.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runOperator(t, nil, "--local", assets, "--local-dir="+dir, "--metrics-bind-address=0")
	if code != 1 || !strings.Contains(stderr, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(stderr, "stop it first") {
		t.Errorf("while another run holds %s: exit code %d, want 1 and the other run's pid:\n%s", dir, code, stderr)
	}
	if data, _ := os.ReadFile(kubeconfig); string(data) != "the first run's\n" {
		t.Errorf("the second run rewrote the kubeconfig: %q", data)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	code, _, stderr = runOperator(t, nil, "--local", assets, "--local-dir="+dir, "--metrics-bind-address=0",
		"--health-probe-bind-address="+busy.Addr().String())
	if code != 1 || !strings.Contains(stderr, "--health-probe-bind-address="+busy.Addr().String()+" is in use") {
		t.Errorf("with the probe port in use: exit code %d, want 1 and the flag named:\n%s", code, stderr)
	}
	if data, _ := os.ReadFile(kubeconfig); string(data) != "the first run's\n" {
		t.Errorf("the run stopped by a busy port rewrote the kubeconfig: %q", data)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("want one line, got:\n%s", stderr)
	}
}
