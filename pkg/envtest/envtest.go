// Package envtest runs a real kube-apiserver and etcd with multicache's CRDs installed, for
// the tests of a module that extends multicache (examples/out-of-tree): the same harness
// multicache's own end-to-end tests use, without its repository at hand. The binaries come
// from $KUBEBUILDER_ASSETS (multicache's `make envtest-assets` builds them into bin/k8s).
package envtest

import (
	"fmt"
	"io"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/config/crd"
	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// Env is a running control plane.
type Env struct {
	cp *controlplane.ControlPlane
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an administrator's client whose Scheme knows the core kinds and
	// cache.multicache.dev.
	Client client.Client
	// Scheme is the Client's scheme; add your own kinds to it before you use them.
	Scheme *runtime.Scheme
}

// Options configure Start.
type Options struct {
	// AssetsDir holds kube-apiserver and etcd. Default: $KUBEBUILDER_ASSETS.
	AssetsDir string
	// Output receives the control plane's logs. Default: discarded.
	Output io.Writer
}

// Start starts kube-apiserver and etcd and installs the CRDs compiled into multicache. An
// unset or wrong assets directory is an error that says where the binaries are expected.
func Start(opts Options) (*Env, error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv(controlplane.AssetsEnv)
	}
	if opts.AssetsDir == "" {
		return nil, fmt.Errorf("no control plane binaries: set %s to a directory with kube-apiserver and etcd "+
			"(multicache's `make envtest-assets` builds them into bin/k8s)", controlplane.AssetsEnv)
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	s := scheme.New()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: opts.AssetsDir, CRDs: crds, Scheme: s, Output: opts.Output})
	if err != nil {
		return nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return &Env{cp: cp, Config: cp.Config, Client: c, Scheme: s}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.cp.Stop() }

// KubeConfig returns a kubeconfig file's content that reaches the API server as an
// administrator: for the processes a test starts beside it (kube-controller-manager, a
// scheduler).
func (e *Env) KubeConfig() ([]byte, error) { return e.cp.KubeConfig() }
