// Package testsupport is the one place for shared test helpers: the real API server harness
// (kube-apiserver and etcd built by `make envtest-assets`, with the CRDs of config/crd) and
// builders of the objects the tests feed the cache.
package testsupport

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Env is the real control plane shared by the tests of one package: a harness.Cluster
// (etcd, kube-apiserver with the CRDs, an administrator's Client and Scheme) found from the
// repository.
type Env struct {
	*harness.Cluster
	// RepoRoot is the directory of the repository's go.mod.
	RepoRoot string
	// AuditLog is the API server's audit log (JSON lines of audit.k8s.io/v1 Events), ""
	// unless StartOptions.AuditPolicy was given.
	AuditLog string

	auditDir string
}

// RunMain starts the control plane, points *env at it, runs the package's tests and stops
// it. Call it from TestMain:
//
//	var env *testsupport.Env
//	func TestMain(m *testing.M) { testsupport.RunMain(m, &env) }
func RunMain(m *testing.M, env **Env) { RunMainWith(m, env, StartOptions{}) }

// RunMainWith is RunMain with a control plane changed by so.
func RunMainWith(m *testing.M, env **Env, so StartOptions) {
	e, err := StartWith(so)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsupport: %v\n", err)
		os.Exit(1)
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testsupport: stopping control plane: %v\n", err)
	}
	os.Exit(code)
}

// StartOptions change the control plane StartWith starts.
type StartOptions struct {
	// APIServerArgs are kube-apiserver flags (name without dashes, value), e.g.
	// NativePodGroupAPI.
	APIServerArgs map[string]string
	// CRDPaths are CRD files or directories, relative to the repository root, installed in
	// addition to config/crd/bases (e.g. SchedulerPluginsPodGroupCRD).
	CRDPaths []string
	// AuditPolicy, when set, is an audit.k8s.io/v1 Policy: the API server logs what it
	// selects as JSON lines to Env.AuditLog, synchronously (a request is in the log when
	// its response arrived).
	AuditPolicy []byte
	// StopTimeout bounds the graceful stop of the API server and etcd. Default:
	// controlplane's, 5 seconds.
	StopTimeout time.Duration
}

// NativePodGroupAPI are the kube-apiserver flags that serve Kubernetes' PodGroup
// (scheduling.k8s.io/v1alpha3) and keep a pod's spec.schedulingGroup.
var NativePodGroupAPI = map[string]string{
	"feature-gates":  "GenericWorkload=true",
	"runtime-config": "scheduling.k8s.io/v1alpha3=true",
}

// SchedulerPluginsPodGroupCRD is the test fixture of scheduler-plugins' PodGroup CRD
// (scheduling.x-k8s.io/v1alpha1), relative to the repository root.
const SchedulerPluginsPodGroupCRD = "test/fixtures/scheduler-plugins"

// StartForTest starts a control plane as StartWith does, for one test: it fails the test
// when the control plane does not start, and stops it when the test ends.
func StartForTest(t testing.TB, so StartOptions) *Env {
	t.Helper()
	e, err := StartWith(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return e
}

// StartWith starts a control plane with the CRDs of config/crd/bases, changed by so. The
// binaries come from $KUBEBUILDER_ASSETS, or bin/k8s of the repository when it is unset.
func StartWith(so StartOptions) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	opts := harness.ClusterOptions{RepoRoot: root, CRDPaths: so.CRDPaths, StopTimeout: so.StopTimeout,
		APIServerArgs: maps.Clone(so.APIServerArgs)}
	if os.Getenv("MULTICACHE_TEST_CONTROL_PLANE_LOGS") == "true" {
		opts.Output = os.Stderr
	}
	e := &Env{RepoRoot: root}
	if so.AuditPolicy != nil {
		if e.auditDir, err = os.MkdirTemp("", "multicache-test-audit-"); err != nil {
			return nil, err
		}
		policy := filepath.Join(e.auditDir, "policy.yaml")
		e.AuditLog = filepath.Join(e.auditDir, "audit.log")
		if err := os.WriteFile(policy, so.AuditPolicy, 0o600); err != nil {
			_ = os.RemoveAll(e.auditDir)
			return nil, fmt.Errorf("writing the audit policy: %w", err)
		}
		if opts.APIServerArgs == nil {
			opts.APIServerArgs = map[string]string{}
		}
		// Blocking mode: no batching, a request is logged before its response is sent.
		for name, value := range map[string]string{"audit-policy-file": policy, "audit-log-path": e.AuditLog,
			"audit-log-format": "json", "audit-log-mode": "blocking"} {
			opts.APIServerArgs[name] = value
		}
	}
	if e.Cluster, err = harness.StartCluster(opts); err != nil {
		_ = os.RemoveAll(e.auditDir)
		return nil, err
	}
	return e, nil
}

// Stop stops the control plane and removes its audit log.
func (e *Env) Stop() error {
	err := e.Cluster.Stop()
	if e.auditDir != "" {
		_ = os.RemoveAll(e.auditDir)
	}
	return err
}

// RepoRoot finds the repository root: the nearest parent directory with the multicache
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isMainModule(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no multicache go.mod above the working directory")
		}
		dir = parent
	}
}

// isMainModule reports whether a go.mod declares the multicache module (and not one of the
// helper modules under hack/ or bench/).
func isMainModule(gomod []byte) bool {
	const want = "module github.com/seed0f91f25e/multicache"
	for _, line := range strings.Split(string(gomod), "\n") {
		if strings.TrimSpace(line) == want {
			return true
		}
	}
	return false
}
