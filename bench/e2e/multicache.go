package e2e

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// MulticacheSubject is the operator binary built from the main module (`go build -o
// bin/multicache .`), with its default stores and options and leader election off. It is
// full when it reports itself caught up (multicache_cache_caught_up: every feed applied
// every object its informer held at sync) and its node and pod stores
// (multicache_store_objects{store}) count every node and pod.
//
// The extra flags are appended (e.g. --verify-period=0, to see what the verify loop costs).
func MulticacheSubject(bin string, extra ...string) Subject {
	return Subject{Name: "multicache", Start: func(env Env, logPath string) (*Instance, error) {
		addrs, err := harness.NewOperatorAddrs()
		if err != nil {
			return nil, err
		}
		args := append([]string{"--kubeconfig=" + env.Kubeconfig}, addrs.Args()...)
		p, err := controlplane.StartProcess(filepath.Base(bin), bin, append(args, extra...), nil, logPath)
		if err != nil {
			return nil, err
		}
		return &Instance{
			Process:    p,
			MetricsURL: "http://" + addrs.MetricsAddr + "/metrics",
			Prefixes:   []string{"multicache_store_objects", "multicache_cache_caught_up"},
			PprofURL:   "http://" + addrs.DebugAddr + "/debug/pprof",
			Full: func(m harness.Metrics, want Want) (bool, string) {
				caughtUp := count(m, "multicache_cache_caught_up")
				nodes, pods := count(m, `multicache_store_objects{store="nodes"}`), count(m, `multicache_store_objects{store="pods"}`)
				return caughtUp == 1 && nodes == want.Nodes && pods == want.Pods,
					fmt.Sprintf("caught_up=%d nodes=%d pods=%d", caughtUp, nodes, pods)
			},
		}, nil
	}}
}

// BaselineName names the second multicache build of a run (BaselineSubject).
const BaselineName = "multicache-baseline"

// BaselineSubject is another multicache binary (e.g. built from the commit before a change)
// cold-started beside MulticacheSubject in the same rounds, for a before/after comparison on
// one cluster.
func BaselineSubject(bin string, extra ...string) Subject {
	s := MulticacheSubject(bin, extra...)
	s.Name = BaselineName
	return s
}

// DebugURL is the base of a multicache instance's debug server: the URL that
// /debug/cache/compare is appended to.
func DebugURL(in *Instance) string {
	return strings.TrimSuffix(in.PprofURL, "/debug/pprof")
}
