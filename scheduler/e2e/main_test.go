// Package e2e runs the multicache scheduler binary against a real kube-apiserver, with
// the real kube-controller-manager running the Deployment, ReplicaSet, Job and disruption
// controllers (both from $KUBEBUILDER_ASSETS: multicache's `make envtest-assets
// kube-controller-manager` builds them into bin/k8s). Nodes are Node objects with
// allocatable in their status: no kubelet is needed to schedule; where a test needs its
// pods to run and turn Ready (a Deployment's rolling update waits for them), KWOK plays the
// kubelet of the nodes annotated for it (kwok from $KUBEBUILDER_ASSETS: `make kwok`). The scheduler is
// $MULTICACHE_SCHEDULER (`make scheduler-check` passes bin/multicache-scheduler), else built
// from this module into a temporary directory. Its log is printed when a test fails, or
// always with MULTICACHE_E2E_LOGS=true.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/config/local"
	"github.com/seed0f91f25e/multicache/pkg/envtest"
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
	stopKWOK, err := startKWOK(filepath.Join(assets, "kwok"), kubeconfig, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting kwok:", err)
		return 1
	}
	defer stopKWOK()

	bin, err := schedulerBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the scheduler:", err)
		return 1
	}
	// kube-scheduler's flags as a user gives them, no --config: the default profile must
	// enable the plugin. Its leader election is on: multicache's leader work (the status
	// the Reservation test waits for) must start when it leads.
	logPath := filepath.Join(dir, "scheduler.log")
	stopScheduler, err := startProcess(bin, []string{"--kubeconfig=" + kubeconfig, "--secure-port=0",
		"--leader-elect=true", "--leader-elect-resource-namespace=default", "-v=2"}, logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the scheduler:", err)
		return 1
	}
	code := m.Run()
	stopScheduler()
	if code != 0 || os.Getenv("MULTICACHE_E2E_LOGS") == "true" {
		if out, err := os.ReadFile(logPath); err == nil {
			fmt.Fprintf(os.Stderr, "e2e: the scheduler's log:\n%s\n", out)
		}
	}
	return code
}

// schedulerBinary is $MULTICACHE_SCHEDULER, else the scheduler built into dir.
func schedulerBinary(dir string) (string, error) {
	if bin := os.Getenv("MULTICACHE_SCHEDULER"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "multicache-scheduler")
	build := exec.Command("go", "build", "-o", bin, "../cmd/multicache-scheduler")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return bin, build.Run()
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
	return startProcess(bin, []string{"--kubeconfig=" + kubeconfig,
		"--controllers=deployment-controller,replicaset-controller,job-controller,disruption-controller",
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=100", "--kube-api-burst=200"}, logPath)
}

// kwokNodeAnnotation marks the nodes KWOK plays the kubelet of.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// startKWOK runs KWOK with the stages of multicache's local cluster (nodes kept Ready, bound
// pods run and turn Ready, deleted ones removed) for the nodes annotated
// kwokNodeAnnotation=fake; it returns how to stop it.
func startKWOK(bin, kubeconfig, dir string) (func(), error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w (`make kwok` builds it)", err)
	}
	stages := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, local.KWOKStages, 0o600); err != nil {
		return nil, err
	}
	return startProcess(bin, []string{"--kubeconfig=" + kubeconfig,
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake", "--config=" + stages}, filepath.Join(dir, "kwok.log"))
}

// startProcess runs bin with args, its output to logPath; it returns how to stop it
// (SIGTERM, then SIGKILL after 10s).
func startProcess(bin string, args []string, logPath string) (func(), error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	}, nil
}
