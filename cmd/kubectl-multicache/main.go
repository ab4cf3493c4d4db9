// Command kubectl-multicache is a kubectl plugin (`kubectl multicache ...`, installed by
// `make install-plugin`) that reads a multicache replica's cache through its debug server:
//
//	kubectl multicache nodes               allocatable, requested, free, pods, reservations per node
//	kubectl multicache node NAME           one node: every resource, its pods and reservations
//	kubectl multicache pods [--assumed]    cached pods and their state
//	kubectl multicache reservations        reservations: phase, node, resources, owner, expiry
//	kubectl multicache podgroups           pod groups and their member counts
//	kubectl multicache compare             differences between the cache and the API (exit 1 if any)
//	kubectl multicache dump                the raw JSON dump
//
// In a cluster the debug server listens on the pod's loopback only; the plugin
// port-forwards to it through the API server, as `kubectl port-forward` does (the caller
// needs list on pods and create on pods/portforward in multicache's namespace). A local
// run (`make run`) is reached directly with --debug-url=http://127.0.0.1:8082.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/version"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes: 0 done, 1 the command failed (or compare found differences), 2 bad usage.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

const usage = `kubectl multicache reads multicache's cache through a replica's debug server.

Usage:
  kubectl multicache COMMAND [ARGS] [flags]

Commands:
  nodes              a table of nodes: allocatable, requested, free, pods, reservations, sources
  node NAME          one node: every resource, its pods and the reservations on it
  pods [--assumed]   cached pods: node, state (Assumed or Added), phase, expiry of assumed pods
  reservations       reservations: phase, node, resources, owner, expiry
  podgroups          pod groups: phase and member counts
  compare            differences between the cache and the API (exit code 1 when there are any)
  dump               the raw JSON dump of /debug/cache
  version            the plugin's version

Flags:
`

// options are the plugin's flags.
type options struct {
	target
	debugURL string
	assumed  bool
	timeout  time.Duration
}

func bindFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to the kubeconfig (default: $KUBECONFIG, then ~/.kube/config).")
	fs.StringVar(&o.context, "context", "", "The kubeconfig context to use.")
	fs.StringVarP(&o.namespace, "namespace", "n", "multicache-system", "Namespace multicache runs in.")
	fs.StringVarP(&o.selector, "selector", "l", "app.kubernetes.io/name=multicache,control-plane=controller-manager",
		"Label selector of multicache's pods; the first running and ready one by name is used.")
	fs.StringVar(&o.pod, "pod", "", "Name of the multicache pod to read (default: chosen by --selector).")
	fs.IntVar(&o.port, "debug-port", 8082, "The pod's debug port (the operator's --debug-bind-address).")
	fs.StringVar(&o.debugURL, "debug-url", "", "Reach a debug server directly instead of port-forwarding, e.g. http://127.0.0.1:8082 for a local run (make run).")
	fs.BoolVar(&o.assumed, "assumed", false, "pods: only the assumed pods.")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "How long to wait for the port-forward and each answer.")
}

// run runs one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := pflag.NewFlagSet("kubectl-multicache", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { _, _ = fmt.Fprint(stderr, usage+fs.FlagUsages()) }
	bindFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return exitUsage
	}
	cmd, cmdArgs := rest[0], rest[1:]
	wantArgs := map[string]int{"nodes": 0, "node": 1, "pods": 0, "reservations": 0, "podgroups": 0, "compare": 0, "dump": 0, "version": 0}
	n, known := wantArgs[cmd]
	switch {
	case !known:
		_, _ = fmt.Fprintf(stderr, "unknown command %q: want one of nodes, node NAME, pods, reservations, podgroups, compare, dump, version (--help)\n", cmd)
		return exitUsage
	case len(cmdArgs) != n && cmd == "node":
		_, _ = fmt.Fprintln(stderr, "node takes one argument, the node's name: kubectl multicache node NAME")
		return exitUsage
	case len(cmdArgs) != n:
		_, _ = fmt.Fprintf(stderr, "%s takes no arguments, got %q\n", cmd, cmdArgs)
		return exitUsage
	case o.assumed && cmd != "pods":
		_, _ = fmt.Fprintln(stderr, "--assumed applies to the pods command only")
		return exitUsage
	case o.timeout <= 0:
		_, _ = fmt.Fprintf(stderr, "--timeout=%s: must be a positive duration such as 30s\n", o.timeout)
		return exitUsage
	case o.debugURL == "" && (o.port < 1 || o.port > 65535):
		_, _ = fmt.Fprintf(stderr, "--debug-port=%d: must be a port between 1 and 65535\n", o.port)
		return exitUsage
	}
	if cmd == "version" {
		_, _ = fmt.Fprintln(stdout, "kubectl-multicache", version.String())
		return exitOK
	}

	var e *endpoint
	var err error
	if o.debugURL != "" {
		e, err = directEndpoint(o.debugURL, o.timeout)
		if err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return exitUsage
		}
	} else if e, err = forwardedEndpoint(ctx, o.target, o.timeout); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return exitFail
	}
	defer e.close()
	e.notes = stderr
	code, err := runCommand(ctx, e, cmd, cmdArgs, o, stdout)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, err)
	}
	return code
}

// runCommand runs a command against the debug server.
func runCommand(ctx context.Context, e *endpoint, cmd string, args []string, o options, out io.Writer) (int, error) {
	fail := func(err error) (int, error) {
		if err != nil {
			return exitFail, err
		}
		return exitOK, nil
	}
	switch cmd {
	case "node":
		body, err := e.get(ctx, "/debug/cache/nodes/"+url.PathEscape(args[0]))
		if errors.Is(err, errNotFound) {
			return exitFail, fmt.Errorf("node %q is not in multicache's cache (kubectl multicache nodes lists those it holds)", args[0])
		} else if err != nil {
			return exitFail, err
		}
		v := &debug.NodeView{}
		if err := json.Unmarshal(body, v); err != nil {
			return exitFail, fmt.Errorf("reading node %s from %s: %w", args[0], e.base, err)
		}
		return fail(showNode(out, v))
	case "compare":
		body, err := e.get(ctx, "/debug/cache/compare")
		if err != nil {
			return exitFail, err
		}
		var diffs []drift.Difference
		if err := json.Unmarshal(body, &diffs); err != nil {
			return exitFail, fmt.Errorf("reading the comparison from %s: %w", e.base, err)
		}
		n, err := showCompare(out, diffs)
		if err != nil || n == 0 {
			return fail(err)
		}
		return exitFail, fmt.Errorf("%d differences between the cache and the API (a difference that lasts is drift: the verify loop repairs it)", n)
	case "dump":
		// Indented, as it printed before the server wrote compact JSON to programs.
		body, err := e.get(ctx, "/debug/cache?pretty=true")
		if err != nil {
			return exitFail, err
		}
		_, err = out.Write(body)
		return fail(err)
	}
	d, err := readDump(ctx, e)
	if err != nil {
		return exitFail, err
	}
	now := time.Now()
	switch cmd {
	case "nodes":
		return fail(showNodes(out, d))
	case "pods":
		return fail(showPods(out, d, o.assumed, now))
	case "reservations":
		return fail(showReservations(out, d, now))
	default: // podgroups
		return fail(showPodGroups(out, d))
	}
}
