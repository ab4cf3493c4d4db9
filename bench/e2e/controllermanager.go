package e2e

import (
	"path/filepath"
	"strings"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// StartControllerManager runs the real kube-controller-manager (bin/k8s, built from
// k8s.io/kubernetes by `make kube-controller-manager`) against the cluster with only the
// given controllers (e.g. deployment-controller, replicaset-controller), leader election
// off, and its client limited to qps requests a second (burst twice that). It serves its
// health and metrics on a free localhost port (self-signed; anonymous reads allowed).
func StartControllerManager(bin string, env Env, controllers []string, qps int, logPath string) (*controlplane.Process, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	args := append(componentArgs(env, port, qps), "--controllers="+strings.Join(controllers, ","))
	return controlplane.StartProcess(filepath.Base(bin), bin, args, nil, logPath)
}
