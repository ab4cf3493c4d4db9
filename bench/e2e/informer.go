package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// InformerSubject is a bare client-go informer for pods and nodes (cmd/informer, built
// into bin): the least any cache of the cluster must do, the floor of the comparison.
func InformerSubject(bin string) Subject {
	return informerSubject("informer", bin, false)
}

// MulticacheKindsInformerSubject is a bare client-go informer of every kind multicache
// watches with its default stores (cmd/informer -kinds=multicache): what the same watches
// cost the API server and the client without a cache behind them. It is full when every
// informer has synced and it holds every pod and node.
func MulticacheKindsInformerSubject(bin string) Subject {
	return informerSubject("informer-mc-kinds", bin, true, "-kinds=multicache")
}

func informerSubject(name, bin string, multicacheKinds bool, extra ...string) Subject {
	return Subject{Name: name, Start: func(env Env, logPath string) (*Instance, error) {
		port, err := harness.FreePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		args := append([]string{"-kubeconfig", env.Kubeconfig, "-addr", addr}, extra...)
		p, err := controlplane.StartProcess(filepath.Base(bin), bin, args, nil, logPath)
		if err != nil {
			return nil, err
		}
		return &Instance{
			Process:    p,
			MetricsURL: "http://" + addr + "/metrics",
			Prefixes:   []string{"informer_objects", "informer_synced"},
			PprofURL:   "http://" + addr + "/debug/pprof",
			Full: func(m harness.Metrics, want Want) (bool, string) {
				nodes, pods := count(m, `informer_objects{kind="nodes"}`), count(m, `informer_objects{kind="pods"}`)
				if !multicacheKinds {
					return nodes == want.Nodes && pods == want.Pods, fmt.Sprintf("nodes=%d pods=%d", nodes, pods)
				}
				synced := count(m, "informer_synced")
				return synced == 1 && nodes == want.Nodes && pods == want.Pods, fmt.Sprintf("synced=%d nodes=%d pods=%d", synced, nodes, pods)
			},
		}, nil
	}}
}
