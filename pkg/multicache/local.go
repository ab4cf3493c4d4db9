package multicache

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
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
	cluster clusterOptions
}

// localState is what --local started: where its kubeconfig is, which node the samples
// describe and where the metrics are, for the banner; and the lock on --local-dir.
type localState struct {
	kubeconfig string
	node       string
	// metricsAddr is --metrics-bind-address ("0": off); metricsSecure is --metrics-secure.
	metricsAddr   string
	metricsSecure bool
	// kubectl is the command the banner shows: kubectl on PATH, else the one `make kubectl`
	// built next to the control plane's binaries.
	kubectl string
	lock    *controlplane.Lock
	// acts is true when the cluster runs controllers, the scheduler and fake kubelets;
	// scenarioNode is the node the banner's scenario deletes a pod on.
	acts         bool
	scenarioNode string
	// components are the processes the local cluster runs besides the control plane.
	components localComponents
}

// listenFlag is an address the operator will listen on, with the flag that sets it.
type listenFlag struct{ flag, addr string }

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
	l.cluster.bindFlags(fs)
}

// startLocal locks --local-dir and checks that the operator's ports are free (so a second
// run changes nothing and says which run is in the way), then starts the embedded control
// plane, writes its kubeconfig, prints where, and applies the --local-apply manifests.
func startLocal(ctx context.Context, local localOptions, listens []listenFlag) (_ *controlplane.ControlPlane, state localState, err error) {
	if state.lock, err = controlplane.LockDir(local.dir); err != nil {
		return nil, state, err
	}
	defer func() {
		if err != nil {
			_ = state.lock.Release()
		}
	}()
	if err := portsFree(listens); err != nil {
		return nil, state, err
	}
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
	path := filepath.Join(local.dir, "kubeconfig")
	if err == nil {
		err = os.WriteFile(path, kubeconfig, 0o600)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, state, fmt.Errorf("writing the local kubeconfig: %w", err)
	}
	state.kubeconfig, _ = filepath.Abs(path)
	state.kubectl = kubectlCommand(local.assets)
	fmt.Printf("local control plane ready at %s\nkubeconfig: %s\n", cp.Config.Host, state.kubeconfig)

	c, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		_ = cp.Stop()
		return nil, state, err
	}
	if local.apply != "" {
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
	if state.components, err = startComponents(ctx, c, local.cluster, local.assets, local.dir, state.kubeconfig); err != nil {
		_ = cp.Stop()
		return nil, state, err
	}
	if !local.cluster.bare && local.cluster.nodes > 0 && state.node == "" {
		state.node = "sample-node"
	}
	if !local.cluster.bare && local.cluster.nodes > 0 {
		// The samples fill sample-node (its NMNode keeps half back, a Reservation the rest):
		// the scenario runs on the nodes beside it.
		state.acts, state.scenarioNode = true, "sample-node"
		if local.cluster.nodes > 1 {
			state.scenarioNode = "kwok-node-1"
		}
	}
	return cp, state, nil
}

// kubectlCommand is "kubectl" when one is on PATH, else the kubectl in the assets directory
// (`make kubectl` builds it there), else "kubectl".
func kubectlCommand(assets string) string {
	if _, err := exec.LookPath("kubectl"); err == nil {
		return "kubectl"
	}
	if assets == "" {
		assets = os.Getenv(controlplane.AssetsEnv)
	}
	if p, err := filepath.Abs(filepath.Join(assets, "kubectl")); err == nil && assets != "" {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return "kubectl"
}

// portsFree fails, naming the flag, when another process listens on one of the addresses:
// better said before a control plane starts than after, as a bind error.
func portsFree(listens []listenFlag) error {
	for _, l := range listens {
		if l.addr == "" || l.addr == "0" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fmt.Errorf("%s=%s is in use (is another multicache or `make run` running?): stop it, or pass another address (make run ARGS=\"%s=127.0.0.1:<port>\")", l.flag, l.addr, l.flag)
		}
		_ = ln.Close()
	}
	return nil
}

// banner is what --local prints once the cache caught up: where to point kubectl and what
// to try. debugAddr is --debug-bind-address ("0": no debug server, so no curl lines).
func banner(st localState, debugAddr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nmulticache %s is ready: the cache caught up with the local control plane.\n", version.Get())
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", st.kubeconfig)
	debug := reachable(debugAddr)
	if debug != "" {
		fmt.Fprintf(&b, "  debug dump: http://%s/debug/cache\n", debug)
	}
	metrics := reachable(st.metricsAddr)
	if metrics != "" && st.metricsSecure {
		// Served to callers the API server authorizes only: say how to read them plainly.
		fmt.Fprintf(&b, "  metrics: https://%s/metrics needs a token; for plain HTTP on loopback run with --metrics-secure=false --metrics-bind-address=127.0.0.1:8080\n", metrics)
	}
	b.WriteString("Try:\n")
	kubectl := st.kubectl
	if kubectl == "" {
		kubectl = "kubectl"
	}
	fmt.Fprintf(&b, "  %s --kubeconfig %s get multicache -A\n", kubectl, st.kubeconfig)
	if debug != "" {
		node := st.node
		if node == "" {
			node = "<node>"
		}
		fmt.Fprintf(&b, "  curl %s/debug/cache/nodes/%s\n", debug, node)
		fmt.Fprintf(&b, "  curl %s/debug/cache/compare\n", debug)
	}
	if metrics != "" && !st.metricsSecure {
		fmt.Fprintf(&b, "  curl -s %s/metrics | grep ^multicache_\n", metrics)
	}
	if st.acts {
		// A minute's scenario: the scheduler keeps a deleted pod's place for its replacement.
		k := fmt.Sprintf("%s --kubeconfig %s", kubectl, st.kubeconfig)
		b.WriteString("Watch a deleted pod's place kept and refilled (controllers, the multicache scheduler and KWOK's fake kubelets run):\n")
		fmt.Fprintf(&b, "  %s apply -f examples/local/demo.yaml && %s get pods -o wide -w\n", k, k)
		fmt.Fprintf(&b, "  %s delete pod -l app=demo --wait=false --field-selector spec.nodeName=%s   # in another terminal\n", k, st.scenarioNode)
		if debug != "" {
			fmt.Fprintf(&b, "  curl %s/debug/cache/nodes/%s   # the kept place, Matched by the replacement\n", debug, st.scenarioNode)
		}
	}
	return b.String()
}

// reachable is the host:port a local client reaches a listen address at ("" when the
// address is "0", off, or not host:port).
func reachable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || addr == "0" {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
