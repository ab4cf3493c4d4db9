// Package controlplane runs a real kube-apiserver and etcd on this machine (the binaries
// `make envtest-assets` builds from Go modules) with the multicache CRDs installed. The tests
// use it through internal/testsupport; `multicache --local` uses it to give a newcomer a
// cluster without one.
package controlplane

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AssetsEnv is the environment variable (shared with envtest) naming the directory that
// holds the kube-apiserver and etcd binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// ErrAssetsMissing is returned when kube-apiserver or etcd is not where it was looked for.
var ErrAssetsMissing = errors.New("control-plane binaries missing")

// Options configure a control plane. The zero value of every field has a documented default.
type Options struct {
	// AssetsDir holds kube-apiserver and etcd. Default: $KUBEBUILDER_ASSETS.
	AssetsDir string
	// CertDir keeps the API server's certificates; a fixed directory lets the API server be
	// restarted without invalidating clients. Default: a new temporary directory, removed by
	// Stop.
	CertDir string
	// CRDPaths are files or directories of CustomResourceDefinition manifests to install.
	CRDPaths []string
	// CRDs are CustomResourceDefinitions to install, in addition to CRDPaths.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Scheme used to install the CRDs. Default: client-go's scheme.
	Scheme *runtime.Scheme
	// APIServerArgs are kube-apiserver flags (name without dashes, value) set in addition to
	// envtest's, e.g. {"feature-gates": "GenericWorkload=true"}. Default: none.
	APIServerArgs map[string]string
	// Output receives the API server's and etcd's logs. Default: discarded.
	Output io.Writer
	// StartTimeout bounds each start of a process. Default: 2 minutes (a cold API server on
	// two cores installs its storage slowly).
	StartTimeout time.Duration
	// StopTimeout bounds the graceful stop of each process before it is killed. Default: 5
	// seconds; with watches open kube-apiserver waits for in-flight requests much longer, and
	// a throwaway control plane has nothing to save.
	StopTimeout time.Duration
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	env        *envtest.Environment
	ownCertDir bool
	// Config reaches the API server as an administrator (system:masters).
	Config *rest.Config
}

// CheckAssets returns the directory holding kube-apiserver and etcd, or an error saying how
// to build them.
func CheckAssets(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(AssetsEnv)
	}
	if dir == "" {
		return "", fmt.Errorf("%w: set %s (or --local-assets) to the directory `make envtest-assets` fills (bin/k8s)", ErrAssetsMissing, AssetsEnv)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: no executable %s: run `make envtest-assets` to build it", ErrAssetsMissing, p)
		}
	}
	return dir, nil
}

// Start starts etcd and the API server, waits until the API answers and installs the CRDs.
func Start(opts Options) (*ControlPlane, error) {
	dir, err := CheckAssets(opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{}
	certDir := opts.CertDir
	if certDir == "" {
		if certDir, err = os.MkdirTemp("", "multicache-apiserver-"); err != nil {
			return nil, fmt.Errorf("creating certificate directory: %w", err)
		}
		cp.ownCertDir = true
	} else if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating certificate directory: %w", err)
	}
	timeout, stopTimeout := opts.StartTimeout, opts.StopTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if stopTimeout == 0 {
		stopTimeout = 5 * time.Second
	}
	apiServer := &envtest.APIServer{CertDir: certDir, Out: opts.Output, Err: opts.Output}
	for name, value := range opts.APIServerArgs {
		apiServer.Configure().Set(name, value)
	}
	etcd := &envtest.Etcd{Out: opts.Output, Err: opts.Output}
	cp.env = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: apiServer, Etcd: etcd},
		BinaryAssetsDirectory:    dir,
		CRDDirectoryPaths:        opts.CRDPaths,
		CRDs:                     opts.CRDs,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   opts.Scheme,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	cfg, err := cp.env.Start()
	if err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	cp.Config = cfg
	return cp, nil
}

// Stop stops the API server and etcd and removes what Start created.
func (c *ControlPlane) Stop() error {
	err := c.env.Stop()
	if c.ownCertDir {
		_ = os.RemoveAll(c.env.ControlPlane.APIServer.CertDir)
	}
	return err
}

// StopAPIServer stops only the API server: etcd keeps its data, clients lose their watches.
// With watches open, kube-apiserver outlasts StopTimeout and is killed, as in a crash.
func (c *ControlPlane) StopAPIServer() error {
	err := c.env.ControlPlane.APIServer.Stop()
	if err != nil && strings.Contains(err.Error(), "timeout waiting for process") {
		return nil // killed after StopTimeout: stopped all the same
	}
	return err
}

// StartAPIServer starts the API server again on the same address with the same
// certificates, so existing clients reconnect.
func (c *ControlPlane) StartAPIServer() error {
	return c.env.ControlPlane.APIServer.Start()
}

// EtcdURL is where etcd listens for clients.
func (c *ControlPlane) EtcdURL() *url.URL {
	return c.env.ControlPlane.Etcd.URL
}

// KubeConfig renders a kubeconfig for an administrator of this control plane.
func (c *ControlPlane) KubeConfig() ([]byte, error) {
	user, err := c.env.AddUser(envtest.User{Name: "multicache-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("provisioning kubeconfig user: %w", err)
	}
	return user.KubeConfig()
}

// AddUser returns a rest.Config for a new user with the given groups, for tests of RBAC.
func (c *ControlPlane) AddUser(name string, groups ...string) (*rest.Config, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return user.Config(), nil
}
