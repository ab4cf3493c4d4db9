package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// SchedulerFlagsSubject is a kube-scheduler binary (the real one, bin/k8s/kube-scheduler
// built by `make kube-scheduler`, or the multicache scheduler) started as users start it,
// with flags and no configuration file: --kubeconfig, --leader-elect=false (the default
// profile), the secure port on a free localhost port (anonymous reads of /metrics and
// /debug/pprof allowed; the certificate is self-signed) and, when qps > 0,
// --kube-api-qps=qps and --kube-api-burst=2*qps (else kube-scheduler's defaults, 50 and
// 100). It is full when its cache-size gauge, scheduler_cache_size{type="pods"|"nodes"},
// counts every object. kube-scheduler refreshes that gauge once a second
// (pkg/scheduler/backend/cache, updateMetricsPeriod), so its times are up to a second late.
func SchedulerFlagsSubject(name, bin string, qps int) Subject {
	return Subject{Name: name, Start: func(env Env, logPath string) (*Instance, error) {
		port, err := harness.FreePort()
		if err != nil {
			return nil, err
		}
		p, err := controlplane.StartProcess(filepath.Base(bin), bin, componentArgs(env, port, qps, "/debug/pprof/*"), nil, logPath)
		if err != nil {
			return nil, err
		}
		base := "https://127.0.0.1:" + strconv.Itoa(port)
		return &Instance{
			Process:    p,
			MetricsURL: base + "/metrics",
			Prefixes:   []string{"scheduler_cache_size"},
			PprofURL:   base + "/debug/pprof",
			Full: func(m harness.Metrics, want Want) (bool, string) {
				nodes, pods := count(m, `scheduler_cache_size{type="nodes"}`), count(m, `scheduler_cache_size{type="pods"}`)
				return nodes == want.Nodes && pods == want.Pods, fmt.Sprintf("nodes=%d pods=%d", nodes, pods)
			},
		}, nil
	}}
}

// componentArgs are the flags a Kubernetes component (kube-scheduler,
// kube-controller-manager) is started with here: the cluster's kubeconfig, leader election
// off, the secure port on localhost with anonymous reads of its health, its metrics and
// extraPaths, and, when qps > 0, its client limited to qps requests a second (burst twice
// that).
func componentArgs(env Env, port, qps int, extraPaths ...string) []string {
	args := []string{
		"--kubeconfig=" + env.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--authorization-always-allow-paths=" + strings.Join(append([]string{"/healthz", "/readyz", "/livez", "/metrics"}, extraPaths...), ","),
	}
	if qps > 0 {
		args = append(args, "--kube-api-qps="+strconv.Itoa(qps), "--kube-api-burst="+strconv.Itoa(2*qps))
	}
	return args
}
