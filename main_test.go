package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

var env *testsupport.Env

func TestMain(m *testing.M) { testsupport.RunMain(m, &env) }

// TestBinary_StartsAgainstTheAPIServerAndReportsReady builds the operator, runs it with a
// kubeconfig for the test API server, waits for /readyz to answer 200 and checks that
// SIGTERM stops it cleanly.
func TestBinary_StartsAgainstTheAPIServerAndReportsReady(t *testing.T) {
	bin := buildOperator(t)
	path := writeKubeconfig(t)
	probe := freeAddress(t)
	cmd, out := startOperator(t, bin, "--kubeconfig="+path, "--health-probe-bind-address="+probe, "--metrics-bind-address=0",
		"--steady-gogc=40")
	waitReady(t, probe, out)
	// Caught up: the collector switches to the steady state's GC percent (GOGC would win).
	if os.Getenv("GOGC") == "" {
		testsupport.Eventually(t, "the steady-state collector log line", 30*time.Second, 50*time.Millisecond, func() (bool, string) {
			o := strings.ReplaceAll(out.String(), `"gcPercent": `, `"gcPercent":`)
			return strings.Contains(o, `"gcPercent":40`), out.String()
		})
	}
	stopGracefully(t, cmd, out)
}

// TestBinary_LocalModeStartsItsOwnControlPlane is what `make run ARGS=--local-bare` does on
// a machine without a cluster: start the embedded control plane, apply the samples, report
// ready, and show every sample in the debug dump.
func TestBinary_LocalModeStartsItsOwnControlPlane(t *testing.T) {
	t.Parallel() // waits on processes; buildOperator is shared
	bin := buildOperator(t)
	dir := t.TempDir()
	probe, debug := freeAddress(t), freeAddress(t)
	cmd, out := startOperator(t, bin, "--local", "--local-bare",
		"--local-assets="+filepath.Join(env.RepoRoot, "bin", "k8s"),
		"--local-dir="+dir,
		"--local-apply="+filepath.Join(env.RepoRoot, "config", "samples"),
		"--health-probe-bind-address="+probe, "--metrics-bind-address=0", "--debug-bind-address="+debug)
	waitReady(t, probe, out)
	waitForDump(t, debug, out, map[string]string{
		"nodes":        "sample-node",
		"podGroups":    "default/sample-gang",
		"movements":    "sample-movement",
		"reservations": "default/sample-reservation",
	})
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err != nil {
		t.Errorf("no kubeconfig written: %v", err)
	}
	// Once caught up, the banner says where to point kubectl and what to try.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	waitForOutput(t, out,
		"export KUBECONFIG="+kubeconfig+"\n",
		"debug dump: http://"+debug+"/debug/cache\n",
		"kubectl --kubeconfig "+kubeconfig+" get multicache -A\n",
		"curl "+debug+"/debug/cache/nodes/sample-node\n",
		"curl "+debug+"/debug/cache/compare\n")
	for _, kind := range []string{"NMNode", "CustomNodeResource", "PodGroup", "Movement", "Reservation"} {
		if !strings.Contains(out.String(), "applied "+kind+" ") {
			t.Errorf("sample %s was not applied; output:\n%s", kind, out)
		}
	}
	stopGracefully(t, cmd, out)
}

// waitForOutput waits until the operator's output holds every line of want.
func waitForOutput(t *testing.T, out *syncBuffer, want ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var missing []string
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the output misses %q:\n%s", missing, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForDump polls /debug/cache until every section holds its key.
func waitForDump(t *testing.T, addr string, out *syncBuffer, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		missing, err := missingFromDump(addr, want)
		if err == nil && len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/debug/cache misses %v (%v); operator output:\n%s", missing, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func missingFromDump(addr string, want map[string]string) ([]string, error) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/cache", addr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var dump map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&dump); err != nil {
		return nil, err
	}
	var missing []string
	for section, key := range want {
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(dump[section], &entries); err != nil || entries[key] == nil {
			missing = append(missing, section+"/"+key)
		}
	}
	return missing, nil
}

// TestBinary_RejectsBadFlagsNamingTheFlag checks that a bad value stops start-up with exit
// code 2 and a message that names the flag.
func TestBinary_RejectsBadFlagsNamingTheFlag(t *testing.T) {
	bin := buildOperator(t)
	for _, tc := range []struct{ arg, want string }{
		{"--health-probe-bind-address=nonsense", "--health-probe-bind-address"},
		{"--metrics-bind-address=:99999", "--metrics-bind-address"},
		{"--stores=nodes,quotas", "--stores"},
		{"--reservation-ttl=-1m", "--reservation-ttl"},
		{"--steady-gogc=-5", "--steady-gogc"},
		{"--version=maybe", "-version"},
		{"stray-argument", "unexpected arguments"},
	} {
		cmd := exec.Command(bin, tc.arg)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		exit, ok := err.(*exec.ExitError)
		if !ok || exit.ExitCode() != 2 {
			t.Errorf("%s: want exit code 2, got %v", tc.arg, err)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: stderr does not name %s:\n%s", tc.arg, tc.want, stderr.String())
		}
	}
}

var (
	builtOperatorMu sync.Mutex
	builtOperator   string
)

// buildOperator compiles the operator once per test binary (the parallel tests wait for
// the first one's build).
func buildOperator(t *testing.T) string {
	t.Helper()
	builtOperatorMu.Lock()
	defer builtOperatorMu.Unlock()
	if builtOperator != "" {
		return builtOperator
	}
	dir, err := os.MkdirTemp("", "multicache-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "multicache")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = env.RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	builtOperator = bin
	return bin
}

// syncBuffer is a bytes.Buffer safe for the process writer and the test reading it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startOperator(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

func waitReady(t *testing.T, addr string, out *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := fmt.Sprintf("http://%s/readyz", addr)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/readyz never answered 200 (last error %v); operator output:\n%s", err, out)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func stopGracefully(t *testing.T, cmd *exec.Cmd, out *syncBuffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("operator did not exit cleanly on SIGTERM: %v\n%s", err, out)
		}
	case <-time.After(time.Minute):
		t.Fatalf("operator did not stop within a minute of SIGTERM:\n%s", out)
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// writeKubeconfig writes an administrator's kubeconfig for the test API server and returns
// its path.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	kubeconfig, err := env.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
