package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// startLoggedCluster makes dir and starts the control plane there, its processes' output in
// dir/controlplane.log and an administrator's kubeconfig in dir/kubeconfig; the harness is
// the only writer, so its clients are not throttled. stop stops it (a failure is written
// to log) and closes the file.
func startLoggedCluster(assets, repoRoot, dir string, log io.Writer) (cl *harness.Cluster, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	cpLog, err := os.Create(filepath.Join(dir, "controlplane.log"))
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "starting kube-apiserver and etcd from %s\n", assets)
	cl, err = harness.StartCluster(harness.ClusterOptions{RepoRoot: repoRoot, Assets: assets, Dir: dir, Output: cpLog, QPS: 1e6})
	if err != nil {
		cpLog.Close()
		return nil, nil, err
	}
	return cl, func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintf(log, "stopping the control plane: %v\n", err)
		}
		cpLog.Close()
	}, nil
}
