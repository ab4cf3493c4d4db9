// Package harness is the driver the tests against a real API server (through
// internal/testsupport), the end-to-end benchmarks (bench/e2e) and the chaos suite
// (test/chaos) share: it starts the control plane with multicache's CRDs, finds ports for
// the programs under test (which run as controlplane.Process), reads their metrics and
// writes objects in bulk.
package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// ClusterOptions configure StartCluster. The zero value of every field but RepoRoot has a
// documented default.
type ClusterOptions struct {
	// RepoRoot is the main module's directory: the CRDs of its config/crd/bases are installed.
	RepoRoot string
	// Assets holds kube-apiserver and etcd. Default: $KUBEBUILDER_ASSETS, else
	// RepoRoot/bin/k8s.
	Assets string
	// Dir, when set, is made and receives the administrator's kubeconfig and the API
	// server's and etcd's logs (controlplane.log, in place of Output).
	Dir string
	// Output receives the API server's and etcd's logs. Default: discarded.
	Output io.Writer
	// QPS is the client-side limit of Config and Client (burst the same). Default:
	// envtest's, 1,000 a second with bursts of 2,000.
	QPS float32
	// StopTimeout bounds the graceful stop of the API server and etcd before they are
	// killed. Default: controlplane's, 5 seconds.
	StopTimeout time.Duration
	// APIServerArgs are kube-apiserver flags (name without dashes, value) in addition to
	// envtest's. Default: none.
	APIServerArgs map[string]string
	// CRDPaths are CRD files or directories, relative to RepoRoot, installed in addition to
	// config/crd/bases. Default: none.
	CRDPaths []string
}

// Cluster is a running etcd and kube-apiserver with multicache's CRDs, an administrator's
// client, and the kubeconfig the programs under test are given. Its certificates stay in
// one directory until Stop, so that the API server can be restarted under its clients.
type Cluster struct {
	*controlplane.ControlPlane
	// Client is an administrator's controller-runtime client with Scheme.
	Client client.Client
	// Scheme knows the core kinds and multicache's.
	Scheme *runtime.Scheme
	// Kubeconfig is the path of an administrator's kubeconfig in ClusterOptions.Dir ("" without).
	Kubeconfig string

	logFile *os.File
}

// StartCluster starts etcd and kube-apiserver, installs the CRDs and builds the client.
func StartCluster(opts ClusterOptions) (*Cluster, error) {
	if opts.Assets == "" {
		opts.Assets = os.Getenv(controlplane.AssetsEnv)
	}
	if opts.Assets == "" {
		opts.Assets = filepath.Join(opts.RepoRoot, "bin", "k8s")
	}
	c := &Cluster{Scheme: scheme.New()}
	if err := c.start(opts); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(opts ClusterOptions) error {
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return err
		}
		log, err := os.Create(filepath.Join(opts.Dir, "controlplane.log"))
		if err != nil {
			return err
		}
		c.logFile, opts.Output = log, log
	}
	crds := []string{filepath.Join(opts.RepoRoot, "config", "crd", "bases")}
	for _, p := range opts.CRDPaths {
		crds = append(crds, filepath.Join(opts.RepoRoot, p))
	}
	cp, err := controlplane.Start(controlplane.Options{
		AssetsDir:     opts.Assets,
		CRDPaths:      crds,
		Scheme:        c.Scheme,
		Output:        opts.Output,
		StopTimeout:   opts.StopTimeout,
		APIServerArgs: opts.APIServerArgs,
	})
	if err != nil {
		return err
	}
	c.ControlPlane = cp
	if opts.QPS > 0 {
		c.Config.QPS, c.Config.Burst = opts.QPS, int(opts.QPS)
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: c.Scheme}); err != nil || opts.Dir == "" {
		return err
	}
	kubeconfig, err := c.KubeConfig()
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(opts.Dir, "kubeconfig")
	return os.WriteFile(c.Kubeconfig, kubeconfig, 0o600)
}

// RestartAPIServer stops the API server, runs whileDown (etcd keeps running, so it may edit
// storage directly) and starts the API server again, waiting up to a minute until it answers.
// Clients stay valid: the certificates are kept.
func (c *Cluster) RestartAPIServer(ctx context.Context, whileDown func() error) error {
	if err := c.StopAPIServer(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if whileDown != nil {
		if err := whileDown(); err != nil {
			return err
		}
	}
	if err := c.StartAPIServer(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := c.Client.List(ctx, &corev1.NamespaceList{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver did not answer after restart: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop stops the API server and etcd and removes their certificates and data.
func (c *Cluster) Stop() error {
	var err error
	if c.ControlPlane != nil {
		err = c.ControlPlane.Stop()
	}
	if c.logFile != nil {
		c.logFile.Close()
	}
	return err
}
