package multicache

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/config/local"
	"github.com/seed0f91f25e/multicache/internal/controlplane"
)

// clusterOptions configure what --local runs besides kube-apiserver and etcd, so that the
// local cluster acts on what the cache knows: kube-controller-manager (Deployments make
// pods, budgets count), the multicache scheduler (pods are bound, kept places honoured) and
// KWOK's fake kubelets (bound pods run, nodes stay Ready).
type clusterOptions struct {
	// bare keeps the control plane to kube-apiserver and etcd.
	bare bool
	// scheduler is the multicache-scheduler binary; "" finds it next to this binary.
	scheduler string
	// nodes is how many fake nodes KWOK serves.
	nodes int
}

// localControllers are the kube-controller-manager controllers a local cluster runs: the
// workloads multicache follows as owners, budgets' status, and garbage collection.
var localControllers = "deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller," +
	"job-controller,disruption-controller,garbage-collector-controller"

func (c *clusterOptions) bindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.bare, "local-bare", false,
		"With --local, run kube-apiserver and etcd only: no kube-controller-manager, scheduler or fake kubelets.")
	fs.StringVar(&c.scheduler, "local-scheduler", "",
		"With --local, the multicache-scheduler binary (`make scheduler`; default: next to this binary).")
	fs.IntVar(&c.nodes, "local-nodes", 3,
		"With --local, how many fake nodes (KWOK) the cluster has: 4 CPUs, 8Gi and 110 pods each; the first is sample-node.")
}

// localComponents are the processes a local cluster runs; stop stops them in reverse order.
type localComponents []*controlplane.Process

func (l localComponents) stop() {
	for i := len(l) - 1; i >= 0; i-- {
		_ = l[i].Stop(5 * time.Second)
	}
}

// startComponents starts the controller manager, KWOK and the scheduler against the local
// control plane (kubeconfig at kubeconfig), their logs in dir, and creates the fake nodes.
// A missing binary is an error naming the make target that builds it (or --local-bare).
func startComponents(ctx context.Context, c client.Client, opts clusterOptions, assets, dir, kubeconfig string) (localComponents, error) {
	if opts.bare {
		return nil, nil
	}
	if opts.nodes < 0 {
		return nil, fmt.Errorf("--local-nodes=%d: want 0 or more", opts.nodes)
	}
	if assets == "" {
		assets = os.Getenv(controlplane.AssetsEnv)
	}
	scheduler := opts.scheduler
	if scheduler == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding multicache-scheduler next to this binary: %w (pass --local-scheduler)", err)
		}
		scheduler = filepath.Join(filepath.Dir(self), "multicache-scheduler")
	}
	specs := []struct {
		name, bin, target string
		args              []string
	}{
		{"kube-controller-manager", filepath.Join(assets, "kube-controller-manager"), "make kube-controller-manager", []string{
			"--kubeconfig=" + kubeconfig, "--controllers=" + localControllers, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=0",
		}},
		{"kwok", filepath.Join(assets, "kwok"), "make kwok", []string{
			"--kubeconfig=" + kubeconfig,
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--config=" + filepath.Join(dir, "kwok-stages.yaml"),
		}},
		{"multicache-scheduler", scheduler, "make scheduler", []string{
			"--config=" + filepath.Join(dir, "scheduler.yaml"), "--secure-port=0",
		}},
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok-stages.yaml"), local.KWOKStages, 0o644); err != nil {
		return nil, fmt.Errorf("writing KWOK's stages: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scheduler.yaml"), []byte(schedulerConfig(kubeconfig)), 0o644); err != nil {
		return nil, fmt.Errorf("writing the scheduler's configuration: %w", err)
	}
	var started localComponents
	for _, s := range specs {
		p, err := controlplane.StartProcess(s.name, s.bin, s.args, nil, filepath.Join(dir, s.name+".log"))
		if errors.Is(err, controlplane.ErrAssetsMissing) {
			err = fmt.Errorf("%w: run `%s` (make run does), or pass --local-bare for kube-apiserver and etcd only", err, s.target)
		}
		if err == nil {
			err = p.Survives(500 * time.Millisecond) // a bad flag, a port in use
		}
		if err != nil {
			started.stop()
			return nil, err
		}
		fmt.Printf("started %s (log: %s)\n", s.name, p.Log)
		started = append(started, p)
	}
	for i := range opts.nodes {
		name := "sample-node"
		if i > 0 {
			name = "kwok-node-" + strconv.Itoa(i)
		}
		if err := createFakeNode(ctx, c, name); err != nil {
			started.stop()
			return nil, fmt.Errorf("creating fake node %s: %w", name, err)
		}
	}
	if opts.nodes > 0 {
		fmt.Printf("created %d fake nodes served by KWOK\n", opts.nodes)
	}
	return started, nil
}

// createFakeNode creates a fake node, untainted, and writes its room through the status
// subresource (kube-apiserver drops the status of a created object); one that exists is
// left alone.
func createFakeNode(ctx context.Context, c client.Client, name string) error {
	node := fakeNode(name)
	status := node.Status
	if err := c.Create(ctx, node); apierrors.IsAlreadyExists(err) {
		return nil
	} else if err != nil {
		return err
	}
	// The API server taints a new node not-ready; without a node lifecycle controller, the
	// taint stays though KWOK reports the node Ready. Merge patches: KWOK writes the node's
	// status meanwhile.
	base := node.DeepCopy()
	node.Spec.Taints = nil
	if err := c.Patch(ctx, node, client.MergeFrom(base)); err != nil {
		return err
	}
	return keepRoom(ctx, c, name, status, 30*time.Second)
}

// keepRoom writes the node's room and writes it again until KWOK reported the node Ready
// and the room stayed for a second: KWOK's first status of a node renders the room it read,
// and one it read before the write is its default (1k CPUs) written over ours.
func keepRoom(ctx context.Context, c client.Client, name string, want corev1.NodeStatus, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	steady := 0
	for {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		cpu := node.Status.Allocatable[corev1.ResourceCPU]
		switch wantCPU := want.Allocatable[corev1.ResourceCPU]; {
		case !cpu.Equal(wantCPU):
			steady = 0
			base := node.DeepCopy()
			node.Status.Allocatable, node.Status.Capacity = want.Allocatable, want.Capacity
			if err := c.Status().Patch(ctx, node, client.MergeFrom(base)); err != nil {
				return err
			}
		case nodeReady(node):
			if steady++; steady >= 5 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: KWOK did not report it Ready with %s CPUs within %s (see kwok.log)", name, want.Allocatable.Cpu(), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// schedulerConfig is the local scheduler's configuration: the default profile with the
// multicache plugin, and multicache's leader-only work left to the operator (leaderWork:
// false), which writes the statuses, reaps and keeps places; two writers would flap them.
// A configuration file makes kube-scheduler ignore --kubeconfig: it is named here.
func schedulerConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Multicache
        weight: 10
  pluginConfig:
  - name: Multicache
    args:
      leaderWork: false
`, kubeconfig)
}

// kwokNodeAnnotation marks the nodes KWOK plays the kubelet of.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// fakeNode is a node KWOK keeps Ready: 4 CPUs, 8Gi, 110 pods.
func fakeNode(name string) *corev1.Node {
	room := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "type": "kwok"},
		},
		Status: corev1.NodeStatus{Allocatable: room, Capacity: room},
	}
}
