package chaos

import (
	"os"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// StartEnv starts the control plane the suite runs against (harness.StartCluster: the real
// kube-apiserver and etcd with the CRDs of config/crd/bases, fixed certificates so that the
// API server can be restarted under its clients), except that a stopping API server is
// killed after one second instead of five: a restart is a crash, not a drain, and is over
// before the operators' renew deadline. The returned function stops it.
func StartEnv() (*testsupport.Env, func(), error) {
	root, err := testsupport.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	opts := harness.ClusterOptions{RepoRoot: root, StopTimeout: time.Second}
	if os.Getenv("MULTICACHE_TEST_CONTROL_PLANE_LOGS") == "true" {
		opts.Output = os.Stderr
	}
	cl, err := harness.StartCluster(opts)
	if err != nil {
		return nil, nil, err
	}
	stop := func() { _ = cl.Stop() }
	return &testsupport.Env{ControlPlane: cl.ControlPlane, Client: cl.Client, Scheme: cl.Scheme, RepoRoot: root}, stop, nil
}
