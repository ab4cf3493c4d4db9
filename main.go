// Command multicache runs the multi-store cache operator: reconcilers feed one in-memory,
// aggregated view of the cluster (nodes, pods, pod groups, disruption budgets, movements,
// reservations) that sibling controllers query in-process and operators observe through CR
// status, metrics and a debug dump.
//
// With --local it first starts an embedded control plane (the real kube-apiserver and etcd
// that `make envtest-assets` builds), installs the CRDs, writes a kubeconfig and runs
// against it.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/memlimit"
	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/version"
)

// crdManifests are the generated CRDs, carried in the binary so --local needs no checkout.
//
//go:embed config/crd/bases/*.yaml
var crdManifests embed.FS

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

func main() {
	os.Exit(run())
}

// run parses flags and runs until SIGTERM or SIGINT; it returns the exit code, so that the
// deferred stop of a --local control plane always runs.
func run() int {
	opts := operator.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	local := localOptions{dir: ".local"}
	flag.BoolVar(&local.enabled, "local", false,
		"Start an embedded control plane (kube-apiserver and etcd from --local-assets), install the CRDs and run against it.")
	flag.StringVar(&local.assets, "local-assets", "",
		"Directory with the kube-apiserver and etcd binaries for --local (default: $KUBEBUILDER_ASSETS).")
	flag.StringVar(&local.dir, "local-dir", local.dir,
		"Directory where --local writes its kubeconfig.")
	flag.StringVar(&local.apply, "local-apply", "",
		"Comma-separated YAML files or directories to apply after --local starts (e.g. config/samples).")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String())
		return 0
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	if err := opts.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "invalid flags: %v\n", err)
		return 2
	}
	// A cache sized to its container must not be OOM-killed before the collector tries.
	if limit, err := memlimit.Set("/", memlimit.DefaultFraction); err != nil {
		log.Error(err, "not setting a Go memory limit from the container's")
	} else if limit > 0 {
		log.Info("Go memory limit set from the container's", "bytes", limit, "fraction", memlimit.DefaultFraction)
	}
	ctx := ctrl.SetupSignalHandler()

	var cfg *rest.Config
	var state localState
	if local.enabled {
		cp, st, err := startLocal(ctx, local)
		if err != nil {
			log.Error(err, "starting the local control plane")
			return 1
		}
		defer func() {
			if err := cp.Stop(); err != nil {
				log.Error(err, "stopping the local control plane")
			}
		}()
		cfg, state = rest.CopyConfig(cp.Config), st
	} else {
		var err error
		if cfg, err = ctrl.GetConfig(); err != nil {
			log.Error(err, "no cluster configured: pass --kubeconfig, set KUBECONFIG, or use --local")
			return 1
		}
	}

	cfg.UserAgent = version.UserAgent()

	op, err := operator.New(cfg, opts)
	if err != nil {
		log.Error(err, "setting up the operator")
		return 1
	}
	if local.enabled {
		go func() {
			select {
			case <-op.CatchUp.Done():
				fmt.Print(banner(state, opts.DebugBindAddress))
			case <-ctx.Done():
			}
		}()
	}
	log.Info("starting multicache", "version", version.Get())
	if err := op.Start(ctx); err != nil {
		log.Error(err, "operator stopped with an error")
		return 1
	}
	log.Info("multicache stopped")
	return 0
}

// startLocal starts the embedded control plane, writes its kubeconfig, prints where, and
// applies the --local-apply manifests.
func startLocal(ctx context.Context, local localOptions) (*controlplane.ControlPlane, localState, error) {
	var state localState
	crds, err := embeddedCRDs()
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

// embeddedCRDs decodes the CRDs compiled into the binary.
func embeddedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := fs.WalkDir(crdManifests, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := crdManifests.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("embedded CRD %s: %w", path, err)
		}
		crds = append(crds, crd)
		return nil
	})
	if err == nil && len(crds) == 0 {
		err = errors.New("no CRDs embedded: run `make manifests`")
	}
	return crds, err
}
