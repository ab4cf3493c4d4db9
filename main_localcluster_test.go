package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// TestBinary_LocalClusterActsOnTheCache is `make run` on a machine without a cluster: the
// local cluster runs kube-controller-manager, the multicache scheduler and KWOK's fake
// kubelets. The banner's scenario holds: the demo Deployment's pods are made, bound and run;
// the pods deleted on kwok-node-1 are replaced there, into the places the cache kept.
func TestBinary_LocalClusterActsOnTheCache(t *testing.T) {
	t.Parallel() // waits on processes; buildOperator is shared
	assets := filepath.Join(env.RepoRoot, "bin", "k8s")
	scheduler := filepath.Join(env.RepoRoot, "bin", "multicache-scheduler")
	for _, p := range []string{filepath.Join(assets, "kube-controller-manager"), filepath.Join(assets, "kwok"), scheduler} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not built (make test builds it: make kube-controller-manager kwok scheduler)", p)
		}
	}
	bin := buildOperator(t)
	dir := t.TempDir()
	probe, debug := freeAddress(t), freeAddress(t)
	cmd, out := startOperator(t, bin, "--local", "--local-assets="+assets, "--local-dir="+dir,
		"--local-scheduler="+scheduler, "--local-apply="+filepath.Join(env.RepoRoot, "config", "samples"),
		"--health-probe-bind-address="+probe, "--metrics-bind-address=0", "--debug-bind-address="+debug)
	defer stopGracefully(t, cmd, out)
	waitReady(t, probe, out)
	waitForOutput(t, out, "Watch a deleted pod's place kept and refilled", "examples/local/demo.yaml")

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Every fake node keeps the room multicache gave it, not KWOK's default.
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.String() != "4" {
			t.Errorf("node %s has %s CPUs allocatable, want 4", n.Name, cpu.String())
		}
	}
	if _, err := controlplane.ApplyManifests(ctx, c, []string{filepath.Join(env.RepoRoot, "examples", "local", "demo.yaml")}); err != nil {
		t.Fatal(err)
	}
	running := func() map[string][]string {
		var pods corev1.PodList
		listCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.List(listCtx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": "demo"}); err != nil {
			t.Fatalf("listing the demo's pods: %v\noperator output:\n%s", err, out)
		}
		byNode := map[string][]string{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
			}
		}
		return byNode
	}
	count := func(m map[string][]string) (n int) {
		for _, v := range m {
			n += len(v)
		}
		return n
	}
	var before map[string][]string
	for before = running(); count(before) < 6; before = running() {
		if ctx.Err() != nil {
			t.Fatalf("the demo's 6 pods are not all running (made, bound, run): %v\n%s", before, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	victims := before["kwok-node-1"]
	if len(victims) == 0 {
		t.Fatalf("no demo pod on kwok-node-1: %v", before)
	}
	for _, name := range victims {
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = "default", name
		if err := c.Delete(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	for {
		after := running()
		gone := 0
		for _, name := range after["kwok-node-1"] {
			for _, v := range victims {
				if name == v {
					gone++
				}
			}
		}
		if gone == 0 && count(after) == 6 && len(after["kwok-node-1"]) == len(victims) {
			return // the replacements landed where their places were kept
		}
		if ctx.Err() != nil {
			dump, _ := missingFromDump(debug, map[string]string{})
			t.Fatalf("after deleting %v on kwok-node-1 the demo runs %v; want %d replacements there (dump check: %v)\noperator output:\n%s\nscheduler log: %s",
				victims, after, len(victims), dump, out, filepath.Join(dir, "multicache-scheduler.log"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
