package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// schedulerConfig is kube-scheduler's configuration: the default profile (every default
// plugin; none needs anything this cluster lacks), no leader election.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
`

// SchedulerSubject is the real kube-scheduler (bin/k8s/kube-scheduler, built from
// k8s.io/kubernetes by `make kube-scheduler`). It is full when its cache-size gauge,
// scheduler_cache_size{type="pods"|"nodes"}, counts every object. kube-scheduler refreshes
// that gauge once a second (pkg/scheduler/backend/cache, updateMetricsPeriod), so its
// times are up to a second late.
//
// Its metrics and /debug/pprof are on the secure port; anonymous requests may read them
// (--authorization-always-allow-paths) and the certificate is self-signed.
func SchedulerSubject(bin string) Subject {
	return Subject{Name: "kube-scheduler", Start: func(env Env, logPath string) (*Instance, error) {
		port, err := harness.FreePort()
		if err != nil {
			return nil, err
		}
		cfg, err := writeFile(env.Dir, "kube-scheduler.yaml", fmt.Sprintf(schedulerConfig, env.Kubeconfig))
		if err != nil {
			return nil, err
		}
		p, err := controlplane.StartProcess(filepath.Base(bin), bin, []string{
			"--config=" + cfg,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
		}, nil, logPath)
		if err != nil {
			return nil, err
		}
		return schedulerInstance(p, port), nil
	}}
}

// schedulerCacheFull is a kube-scheduler's Full: its cache-size gauge counts every wanted
// node and pod.
func schedulerCacheFull(m harness.Metrics, want Want) (bool, string) {
	nodes, pods := count(m, `scheduler_cache_size{type="nodes"}`), count(m, `scheduler_cache_size{type="pods"}`)
	return nodes == want.Nodes && pods == want.Pods, fmt.Sprintf("nodes=%d pods=%d", nodes, pods)
}

// schedulerInstance is a running kube-scheduler (stock or multicache's) as a subject: its
// metrics and pprof on its secure port, full once its cache holds every node.
func schedulerInstance(p *controlplane.Process, port int) *Instance {
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	return &Instance{
		Process:    p,
		MetricsURL: base + "/metrics",
		Prefixes:   []string{"scheduler_cache_size"},
		PprofURL:   base + "/debug/pprof",
		Full:       schedulerCacheFull,
	}
}
