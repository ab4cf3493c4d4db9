// Package e2e runs the multicache scheduler in process against a real kube-apiserver, with
// the real kube-controller-manager running the Deployment, ReplicaSet, Job and disruption
// controllers (both from $KUBEBUILDER_ASSETS: multicache's `make envtest-assets
// kube-controller-manager` builds them into bin/k8s). Nodes are Node objects with
// allocatable in their status: no kubelet is needed to schedule.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/pkg/envtest"
	"github.com/seed0f91f25e/multicache/scheduler/command"
)

// env is the control plane every test shares; each test works in its own namespace on
// nodes labelled for it alone.
var env *envtest.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		fmt.Fprintln(os.Stderr, "e2e: set KUBEBUILDER_ASSETS to a directory with kube-apiserver, etcd and kube-controller-manager (`make envtest-assets kube-controller-manager` builds them into bin/k8s)")
		return 1
	}
	var err error
	if env, err = envtest.Start(envtest.Options{AssetsDir: assets}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the control plane:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	dir, err := os.MkdirTemp("", "multicache-scheduler-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig, err := writeKubeconfig(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: writing the kubeconfig:", err)
		return 1
	}
	stopKCM, err := startControllerManager(filepath.Join(assets, "kube-controller-manager"), kubeconfig, filepath.Join(dir, "kcm.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting kube-controller-manager:", err)
		return 1
	}
	defer stopKCM()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// kube-scheduler's flags as a user gives them, no --config: the default profile
		// must enable the plugin. Without leader election (kube-scheduler exits the process
		// when a leader's context ends) this replica leads from the start: multicache's
		// leader work (status, reaper) runs.
		cmd := command.NewWithContext(ctx)
		cmd.SetArgs([]string{"--kubeconfig=" + kubeconfig, "--secure-port=0", "--leader-elect=false", "-v=2"})
		done <- cmd.Execute()
	}()
	code := m.Run()
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "e2e: the scheduler did not stop within 30s")
	}
	return code
}

func writeKubeconfig(dir string) (string, error) {
	data, err := env.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// startControllerManager runs kube-controller-manager with the workload controllers the
// tests need, leader election off, serving nothing; it returns how to stop it.
func startControllerManager(bin, kubeconfig, logPath string) (func(), error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w (`make kube-controller-manager` builds it)", err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfig,
		"--controllers=deployment-controller,replicaset-controller,job-controller,disruption-controller",
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=100", "--kube-api-burst=200")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
	}, nil
}
