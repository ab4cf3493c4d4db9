package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// Cluster is a running etcd and kube-apiserver with multicache's CRDs, and a kubeconfig
// file every subject is given.
type Cluster struct {
	cp *controlplane.ControlPlane
	// Config reaches the API server as an administrator, without client-side rate limits.
	Config *rest.Config
	// Client is a controller-runtime client for every kind the harness writes.
	Client client.Client
	// Kubeconfig is the path of an administrator's kubeconfig.
	Kubeconfig string
}

// StartCluster starts the control plane from the binaries in assets, installs the CRDs of
// repoRoot/config/crd/bases, and writes a kubeconfig into dir. The API server's and etcd's
// logs go to logs.
func StartCluster(assets, repoRoot, dir string, logs io.Writer) (*Cluster, error) {
	s := scheme.New()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(controlplane.Options{
		AssetsDir: assets,
		CRDPaths:  []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		Scheme:    s,
		Output:    logs,
	})
	if err != nil {
		return nil, err
	}
	c := &Cluster{cp: cp, Config: rest.CopyConfig(cp.Config)}
	// The harness is the only writer: no client-side throttling.
	c.Config.QPS, c.Config.Burst = 1e6, 1e6
	if c.Client, err = client.New(c.Config, client.Options{Scheme: s}); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	kubeconfig, err := cp.KubeConfig()
	if err == nil {
		c.Kubeconfig = filepath.Join(dir, "kubeconfig")
		err = os.WriteFile(c.Kubeconfig, kubeconfig, 0o600)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return c, nil
}

// Stop stops the API server and etcd.
func (c *Cluster) Stop() error { return c.cp.Stop() }

// startLoggedCluster makes dir and starts the control plane there, its processes' output in
// dir/controlplane.log; stop stops it (a failure is written to log) and closes the file.
func startLoggedCluster(assets, repoRoot, dir string, log io.Writer) (cl *Cluster, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	cpLog, err := os.Create(filepath.Join(dir, "controlplane.log"))
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "starting kube-apiserver and etcd from %s\n", assets)
	cl, err = StartCluster(assets, repoRoot, dir, cpLog)
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
