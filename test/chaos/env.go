package chaos

import (
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	mcscheme "github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// StartEnv starts the control plane the suite runs against: testsupport's (the real
// kube-apiserver and etcd with the CRDs of config/crd/bases, fixed certificates so that
// the API server can be restarted under its clients), except that a stopping API server is
// killed after one second instead of five: a restart is a crash, not a drain, and is over
// before the operators' renew deadline. The returned function stops it.
func StartEnv() (*testsupport.Env, func(), error) {
	root, err := testsupport.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	assets := os.Getenv(controlplane.AssetsEnv)
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	certDir, err := os.MkdirTemp("", "multicache-chaos-certs-")
	if err != nil {
		return nil, nil, err
	}
	scheme := mcscheme.New()
	opts := controlplane.Options{
		AssetsDir:   assets,
		CertDir:     certDir,
		CRDPaths:    []string{filepath.Join(root, "config", "crd", "bases")},
		Scheme:      scheme,
		StopTimeout: time.Second,
	}
	if os.Getenv("MULTICACHE_TEST_CONTROL_PLANE_LOGS") == "true" {
		opts.Output = os.Stderr
	}
	cp, err := controlplane.Start(opts)
	if err != nil {
		_ = os.RemoveAll(certDir)
		return nil, nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		_ = cp.Stop()
		_ = os.RemoveAll(certDir)
		return nil, nil, err
	}
	stop := func() {
		_ = cp.Stop()
		_ = os.RemoveAll(certDir)
	}
	return &testsupport.Env{ControlPlane: cp, Client: c, Scheme: scheme, RepoRoot: root}, stop, nil
}
