// Package testsupport is the one place for shared test helpers: the real API server harness
// (kube-apiserver and etcd built by `make envtest-assets`, with the CRDs of config/crd) and
// builders of the objects the tests feed the cache.
package testsupport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	mcscheme "github.com/seed0f91f25e/multicache/internal/scheme"
)

// Env is the real control plane shared by the tests of one package.
type Env struct {
	*controlplane.ControlPlane
	// Client is an administrator's client with the multicache scheme.
	Client client.Client
	// Scheme knows the core kinds and cache.multicache.dev/v1alpha1.
	Scheme *runtime.Scheme
	// RepoRoot is the directory of the repository's go.mod.
	RepoRoot string
	// AuditLog is the API server's audit log (JSON lines of audit.k8s.io/v1 Events), ""
	// unless StartOptions.AuditPolicy was given.
	AuditLog string

	certDir string
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

// Start starts a control plane with the CRDs of config/crd/bases. The binaries come from
// $KUBEBUILDER_ASSETS, or bin/k8s of the repository when it is unset.
func Start() (*Env, error) { return StartWith(StartOptions{}) }

// StartOptions change the control plane StartWith starts; the zero value is Start's.
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

// StartWith starts a control plane as Start does, changed by so. A package whose tests need
// another API server than its TestMain's starts its own with it.
func StartWith(so StartOptions) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets := os.Getenv(controlplane.AssetsEnv)
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	certDir, err := os.MkdirTemp("", "multicache-test-certs-")
	if err != nil {
		return nil, err
	}
	scheme := mcscheme.New()
	opts := controlplane.Options{
		AssetsDir: assets,
		CertDir:   certDir, // fixed so that RestartAPIServer keeps clients valid
		CRDPaths:  []string{filepath.Join(root, "config", "crd", "bases")},
		Scheme:    scheme,

		APIServerArgs: map[string]string{},
	}
	for name, value := range so.APIServerArgs {
		opts.APIServerArgs[name] = value
	}
	auditLog := ""
	if so.AuditPolicy != nil {
		auditDir := filepath.Join(certDir, "audit")
		policy := filepath.Join(auditDir, "policy.yaml")
		auditLog = filepath.Join(auditDir, "audit.log")
		if err := os.MkdirAll(auditDir, 0o700); err == nil {
			err = os.WriteFile(policy, so.AuditPolicy, 0o600)
		}
		if err != nil {
			_ = os.RemoveAll(certDir)
			return nil, fmt.Errorf("writing the audit policy: %w", err)
		}
		// Blocking mode: no batching, a request is logged before its response is sent.
		for name, value := range map[string]string{"audit-policy-file": policy, "audit-log-path": auditLog,
			"audit-log-format": "json", "audit-log-mode": "blocking"} {
			opts.APIServerArgs[name] = value
		}
	}
	for _, p := range so.CRDPaths {
		opts.CRDPaths = append(opts.CRDPaths, filepath.Join(root, p))
	}
	if os.Getenv("MULTICACHE_TEST_CONTROL_PLANE_LOGS") == "true" {
		opts.Output = os.Stderr
	}
	cp, err := controlplane.Start(opts)
	if err != nil {
		_ = os.RemoveAll(certDir)
		return nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return &Env{ControlPlane: cp, Client: c, Scheme: scheme, RepoRoot: root, AuditLog: auditLog, certDir: certDir}, nil
}

// Stop stops the control plane and removes its certificates.
func (e *Env) Stop() error {
	err := e.ControlPlane.Stop()
	_ = os.RemoveAll(e.certDir)
	return err
}

// RestartAPIServer stops the API server, runs whileDown (etcd keeps running, so it may edit
// storage directly) and starts the API server again, waiting until it answers.
func (e *Env) RestartAPIServer(ctx context.Context, whileDown func() error) error {
	if err := e.StopAPIServer(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if whileDown != nil {
		if err := whileDown(); err != nil {
			return err
		}
	}
	if err := e.StartAPIServer(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := e.Client.List(ctx, &corev1.NamespaceList{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver did not answer after restart: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
