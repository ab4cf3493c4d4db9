package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// TestRealisticPods_ServedAsARunningClustersPods populates a few realistic pods through a
// real API server and checks what it serves: a running pod with the kubelet's five
// conditions and a status per container, the service-account volume mounted everywhere,
// managedFields of the controller and the kubelet, and a served size in the range of a
// Deployment's pods in a running cluster.
func TestRealisticPods_ServedAsARunningClustersPods(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make bench-e2e-check`")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := harness.StartCluster(harness.ClusterOptions{RepoRoot: repo, Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	size, err := Size{Name: "4/30", Nodes: 4, Pods: 30}.WithPodShape(PodsRealistic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Populate(ctx, cl.Client, size, 8, io.Discard); err != nil {
		t.Fatal(err)
	}

	var pod corev1.Pod
	if err := cl.Client.Get(ctx, populatedPod(3), &pod); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || len(pod.Status.HostIPs) != 1 || pod.Status.QOSClass == "" {
		t.Errorf("status: phase %q, pod IP %q, host IPs %v, QoS %q; want a running pod with its IPs and QoS class",
			pod.Status.Phase, pod.Status.PodIP, pod.Status.HostIPs, pod.Status.QOSClass)
	}
	var conds []corev1.PodConditionType
	for _, c := range pod.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, c.Type)
		}
	}
	for _, want := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		if !slices.Contains(conds, want) {
			t.Errorf("conditions true: %v, want %s among them", conds, want)
		}
	}
	if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) || len(pod.Spec.Containers) != 2 {
		t.Fatalf("%d containers, %d statuses; want pod 3 with its sidecar, a status each", len(pod.Spec.Containers), len(pod.Status.ContainerStatuses))
	}
	for i, cs := range pod.Status.ContainerStatuses {
		c := pod.Spec.Containers[i]
		if cs.ImageID == "" || cs.ContainerID == "" || cs.AllocatedResources == nil || cs.Resources == nil || len(cs.VolumeMounts) != 1 || cs.State.Running == nil {
			t.Errorf("container status %s: %+v; want image and container IDs, allocated resources, resources, a mount, running", cs.Name, cs)
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != pod.Spec.Volumes[0].Name || pod.Spec.Volumes[0].Projected == nil ||
			c.LivenessProbe == nil || c.ReadinessProbe == nil || len(c.Env) < 5 {
			t.Errorf("container %s: mounts %v of volumes %v, probes %v %v, %d env; want the projected volume mounted, probes, env",
				c.Name, c.VolumeMounts, pod.Spec.Volumes, c.LivenessProbe, c.ReadinessProbe, len(c.Env))
		}
	}
	managers := map[string]string{}
	for _, mf := range pod.ManagedFields {
		managers[mf.Manager] = mf.Subresource
	}
	if sub, ok := managers[ControllerFieldManager]; !ok || sub != "" || managers[KubeletFieldManager] != "status" || len(managers) != 2 {
		t.Errorf("managedFields by manager (subresource): %v; want %s on the pod and %s on status", managers, ControllerFieldManager, KubeletFieldManager)
	}

	sizes, err := MeasurePodSizes(ctx, cl.Config, size.Pods, size.Pods)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("served: %s", sizes)
	// A Deployment's pod of a running cluster: 7 to 12 KB in JSON, about two thirds of
	// that in protobuf, managedFields 35% to 50%.
	if sizes.JSONBytes < 7000 || sizes.JSONBytes > 12000 || sizes.ProtobufBytes > 0.8*sizes.JSONBytes ||
		sizes.JSONManagedShare < 0.35 || sizes.JSONManagedShare > 0.5 || sizes.Managers != 2 {
		t.Errorf("served: %s; want 7 to 12 KB in JSON, protobuf under 80%% of it, managedFields 35%% to 50%% in 2 entries", sizes)
	}
}
