package multicache

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/config/crd"
	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/version"
)

// localOptions configure --local.
type localOptions struct {
	enabled bool
	assets  string
	dir     string
	apply   string
}

// localState is what --local started: where its kubeconfig is and which node the samples
// describe, for the banner.
type localState struct {
	kubeconfig string
	node       string
}

// bindFlags registers the --local flags.
func (l *localOptions) bindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&l.enabled, "local", false,
		"Start an embedded control plane (kube-apiserver and etcd from --local-assets), install the CRDs and run against it.")
	fs.StringVar(&l.assets, "local-assets", "",
		"Directory with the kube-apiserver and etcd binaries for --local (default: $KUBEBUILDER_ASSETS).")
	fs.StringVar(&l.dir, "local-dir", l.dir,
		"Directory where --local writes its kubeconfig.")
	fs.StringVar(&l.apply, "local-apply", "",
		"Comma-separated YAML files or directories to apply after --local starts (e.g. config/samples).")
}

// startLocal starts the embedded control plane, writes its kubeconfig, prints where, and
// applies the --local-apply manifests.
func startLocal(ctx context.Context, local localOptions) (*controlplane.ControlPlane, localState, error) {
	var state localState
	crds, err := crd.CRDs()
	if err != nil {
		return nil, state, err
	}
	s := scheme.New()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, state, err
	}
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: local.assets, CRDs: crds, Scheme: s})
	if err != nil {
		return nil, state, err
	}
	kubeconfig, err := cp.KubeConfig()
	if err == nil {
		err = os.MkdirAll(local.dir, 0o700)
	}
	path := filepath.Join(local.dir, "kubeconfig")
	if err == nil {
		err = os.WriteFile(path, kubeconfig, 0o600)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, state, fmt.Errorf("writing the local kubeconfig: %w", err)
	}
	state.kubeconfig, _ = filepath.Abs(path)
	fmt.Printf("local control plane ready at %s\nkubeconfig: %s\n", cp.Config.Host, state.kubeconfig)

	if local.apply != "" {
		c, err := client.New(cp.Config, client.Options{Scheme: s})
		if err != nil {
			_ = cp.Stop()
			return nil, state, err
		}
		applied, err := controlplane.ApplyManifests(ctx, c, strings.Split(local.apply, ","))
		if err != nil {
			_ = cp.Stop()
			return nil, state, fmt.Errorf("applying --local-apply manifests: %w", err)
		}
		for _, a := range applied {
			fmt.Printf("applied %s\n", a)
			kind, name, _ := strings.Cut(a, " ")
			if state.node == "" && (kind == "NMNode" || kind == "CustomNodeResource") {
				state.node = name
			}
		}
	}
	return cp, state, nil
}

// banner is what --local prints once the cache caught up: where to point kubectl and what
// to try. debugAddr is --debug-bind-address ("0": no debug server, so no curl lines).
func banner(st localState, debugAddr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nmulticache %s is ready: the cache caught up with the local control plane.\n", version.Get())
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", st.kubeconfig)
	debug := ""
	if host, port, err := net.SplitHostPort(debugAddr); err == nil && debugAddr != "0" {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		debug = net.JoinHostPort(host, port)
		fmt.Fprintf(&b, "  debug dump: http://%s/debug/cache\n", debug)
	}
	b.WriteString("Try:\n")
	fmt.Fprintf(&b, "  kubectl --kubeconfig %s get multicache -A\n", st.kubeconfig)
	if debug != "" {
		node := st.node
		if node == "" {
			node = "<node>"
		}
		fmt.Fprintf(&b, "  curl %s/debug/cache/nodes/%s\n", debug, node)
		fmt.Fprintf(&b, "  curl %s/debug/cache/compare\n", debug)
	}
	return b.String()
}
