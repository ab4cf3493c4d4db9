package e2e

import (
	"fmt"
	"strconv"
)

// InformerSubject is a bare client-go informer for pods and nodes (cmd/informer, built
// into bin): the least any cache of the cluster must do, the floor of the comparison.
func InformerSubject(bin string) Subject {
	return Subject{Name: "informer", Start: func(env Env, logPath string) (*Instance, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p, err := StartProcess(bin, []string{"-kubeconfig", env.Kubeconfig, "-addr", addr}, nil, logPath)
		if err != nil {
			return nil, err
		}
		return &Instance{
			Process:    p,
			MetricsURL: "http://" + addr + "/metrics",
			Prefixes:   []string{"informer_objects"},
			PprofURL:   "http://" + addr + "/debug/pprof",
			Full: func(m Metrics, want Want) (bool, string) {
				nodes, pods := count(m, `informer_objects{kind="nodes"}`), count(m, `informer_objects{kind="pods"}`)
				return nodes == want.Nodes && pods == want.Pods, fmt.Sprintf("nodes=%d pods=%d", nodes, pods)
			},
		}, nil
	}}
}
