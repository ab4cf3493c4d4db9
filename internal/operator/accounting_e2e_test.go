package operator

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestAccounting_NodeRequestsFollowKubeSchedulerThroughTheAPIServer creates pods bound to a
// node through the real API server — pod-level requests, sidecars, resizes reported in the
// status by a (simulated) kubelet, one declared Infeasible, one resized through the resize
// subresource — and checks that the node's Requested in the cache is what kube-scheduler
// v1.37.1 charges:
//
//	per pod: k8s.io/component-helpers/resource.PodRequests(pod, {UseStatusResources: true,
//	         InPlacePodLevelResourcesVerticalScalingEnabled: true}), i.e. per resource the
//	         larger of the spec and the status (allocated, actuated), the status alone while
//	         PodResizePending is Infeasible; pod-level requests replace the resources they
//	         name; init containers and sidecars by the sidecar KEP; plus overhead;
//	then cpu in milli-units and the rest in whole units, rounded up once per pod, summed.
//
// The figures are also hand-computed below (both must agree with the cache).
func TestAccounting_NodeRequestsFollowKubeSchedulerThroughTheAPIServer(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	nodeName := "acct-node-" + ns
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName},
		Status: corev1.NodeStatus{
			Allocatable: acctList("cpu", "64", "memory", "256Gi", "pods", "110", "example.com/gpu", "8"),
			Capacity:    acctList("cpu", "64", "memory", "256Gi", "pods", "110", "example.com/gpu", "8"),
		},
	}
	if err := env.Client.Create(ctx(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx(), node) })

	main := func(requests corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: requests}}
	}
	pod := func(name string, spec corev1.PodSpec) *corev1.Pod {
		spec.NodeName = nodeName
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	}

	// Pod-level cpu 3 replaces only cpu: memory and the GPU still come from the container.
	gpuContainer := main(acctList("memory", "1Gi", "example.com/gpu", "2"))
	gpuContainer.Resources.Limits = acctList("example.com/gpu", "2")
	podLevel := pod("pod-level", corev1.PodSpec{
		Containers: []corev1.Container{gpuContainer},
		Resources:  &corev1.ResourceRequirements{Requests: acctList("cpu", "3")},
	})
	// Sidecar 200m/100Mi, then an init container 1/2Gi beside it, then main 1/1Gi:
	// max(main + sidecar, init + sidecar) = 1200m, 2148Mi.
	sidecar := corev1.Container{Name: "sidecar", Image: "registry.k8s.io/pause:3.10", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Resources: corev1.ResourceRequirements{Requests: acctList("cpu", "200m", "memory", "100Mi")}}
	setup := corev1.Container{Name: "setup", Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Requests: acctList("cpu", "1", "memory", "2Gi")}}
	sidecars := pod("sidecars", corev1.PodSpec{
		InitContainers: []corev1.Container{sidecar, setup},
		Containers:     []corev1.Container{main(acctList("cpu", "1", "memory", "1Gi"))},
	})
	// The kubelet will report a resize to 2 cpu, allocated and actuated.
	statusResize := pod("status-resize", corev1.PodSpec{Containers: []corev1.Container{main(acctList("cpu", "1", "memory", "1Gi"))}})
	// Asks for 3/4Gi; the kubelet will keep it at 1/1Gi and declare the resize Infeasible.
	infeasible := pod("infeasible", corev1.PodSpec{Containers: []corev1.Container{main(acctList("cpu", "3", "memory", "4Gi"))}})
	// Resized through the resize subresource to 2/3Gi.
	resized := pod("resized", corev1.PodSpec{Containers: []corev1.Container{main(acctList("cpu", "1", "memory", "1Gi"))}})
	// Pod-level 1/1Gi; the kubelet will report a pod-level allocation of 2 cpu.
	podStatus := pod("pod-level-status", corev1.PodSpec{
		Containers: []corev1.Container{main(acctList("cpu", "500m", "memory", "512Mi"))},
		Resources:  &corev1.ResourceRequirements{Requests: acctList("cpu", "1", "memory", "1Gi")},
	})
	pods := []*corev1.Pod{podLevel, sidecars, statusResize, infeasible, resized, podStatus}
	for _, p := range pods {
		if err := env.Client.Create(ctx(), p); err != nil {
			t.Fatalf("creating %s: %v", p.Name, err)
		}
	}

	// As created, by hand: cpu 3000 + 1200 + 1000 + 3000 + 1000 + 1000 (pod level) m;
	// memory 1024 + 2148 + 1024 + 4096 + 1024 + 1024 Mi; 2 GPUs; 6 pods.
	acctExpect(t, op, nodeName, ns, "the pods as created", store.Resources{
		MilliCPU: 10200, Memory: 10340 << 20, Pods: 6, Scalar: map[corev1.ResourceName]int64{"example.com/gpu": 2},
	})

	// The kubelet's reports, through the status subresource.
	acctStatus(t, statusResize, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{acctContainerStatus("main", acctList("cpu", "2", "memory", "1Gi"), acctList("cpu", "2", "memory", "1Gi"))}
	})
	acctStatus(t, infeasible, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{acctContainerStatus("main", acctList("cpu", "1", "memory", "1Gi"), acctList("cpu", "1", "memory", "1Gi"))}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible,
			Message: "Node didn't have enough capacity", LastTransitionTime: metav1.Now(),
		})
	})
	acctStatus(t, podStatus, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{acctContainerStatus("main", acctList("cpu", "500m", "memory", "512Mi"), acctList("cpu", "500m", "memory", "512Mi"))}
		p.Status.AllocatedResources = acctList("cpu", "2", "memory", "1Gi")
		p.Status.Resources = &corev1.ResourceRequirements{Requests: acctList("cpu", "2", "memory", "1Gi")}
	})
	// A resize through the resize subresource (what kubectl patch --subresource resize does).
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(resized), resized); err != nil {
		t.Fatal(err)
	}
	resized.Spec.Containers[0].Resources.Requests = acctList("cpu", "2", "memory", "3Gi")
	if err := env.Client.SubResource("resize").Update(ctx(), resized); err != nil {
		t.Fatalf("resizing: %v", err)
	}
	if got := resized.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]; got.Cmp(resource.MustParse("3Gi")) != 0 {
		t.Fatalf("the resize subresource stored memory %s, want 3Gi", got.String())
	}

	// After: status-resize 2000m (allocated), infeasible 1000m/1Gi (status only),
	// resized 2000m/3Gi, pod-level-status 2000m (pod-level allocation):
	// cpu 3000 + 1200 + 2000 + 1000 + 2000 + 2000 m; memory 1024 + 2148 + 1024 + 1024 +
	// 3072 + 1024 Mi.
	acctExpect(t, op, nodeName, ns, "the resizes", store.Resources{
		MilliCPU: 11200, Memory: 9316 << 20, Pods: 6, Scalar: map[corev1.ResourceName]int64{"example.com/gpu": 2},
	})

	// The kubelet finds room after all: the condition goes, the spec counts again (3/4Gi).
	acctStatus(t, infeasible, func(p *corev1.Pod) {
		p.Status.Conditions = nil
		p.Status.ContainerStatuses[0].AllocatedResources = acctList("cpu", "3", "memory", "4Gi")
	})
	acctExpect(t, op, nodeName, ns, "the infeasible resize becoming feasible", store.Resources{
		MilliCPU: 13200, Memory: 12388 << 20, Pods: 6, Scalar: map[corev1.ResourceName]int64{"example.com/gpu": 2},
	})

	// Deleting every pod releases every charge.
	for _, p := range pods {
		if err := env.Client.Delete(ctx(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the node is charged nothing", func() (bool, string) {
		info, ok := op.Cache.NodeInfo(nodeName)
		if !ok {
			return false, "no node"
		}
		return info.Requested.IsZero(), fmt.Sprintf("requested {%s}", acctShow(info.Requested))
	})
}

// acctExpect waits until the node's Requested in the cache equals want (hand-computed) and
// equals kube-scheduler's formula applied to the pods of ns as the API server has them.
func acctExpect(t *testing.T, op *running, node, ns, after string, want store.Resources) {
	t.Helper()
	eventually(t, "the node's requests follow "+after, func() (bool, string) {
		var list corev1.PodList
		if err := env.Client.List(ctx(), &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		formula := acctKubeSchedulerCharge(list.Items)
		info, ok := op.Cache.NodeInfo(node)
		if !ok {
			return false, "the node is not in the cache"
		}
		got := info.Requested
		return got.Equal(want) && got.Equal(formula), fmt.Sprintf("cache {%s}, by hand {%s}, kube-scheduler's formula over the API's pods {%s}",
			acctShow(got), acctShow(want), acctShow(formula))
	})
}

// acctKubeSchedulerCharge is what kube-scheduler v1.37.1 (default feature gates) charges a
// node for pods: PodInfo.CalculateResource's helper options, then framework.Resource.Add's
// conversion (milli-cpu, whole units, rounded up once per pod); it counts pods apart.
func acctKubeSchedulerCharge(pods []corev1.Pod) store.Resources {
	total := store.Resources{}
	for i := range pods {
		reqs := resourcehelper.PodRequests(pods[i].DeepCopy(), resourcehelper.PodResourcesOptions{
			UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true,
		})
		pod := store.Resources{Pods: 1}
		for name, q := range reqs {
			switch name {
			case corev1.ResourceCPU:
				pod.MilliCPU += q.MilliValue()
			case corev1.ResourceMemory:
				pod.Memory += q.Value()
			case corev1.ResourceEphemeralStorage:
				pod.EphemeralStorage += q.Value()
			case corev1.ResourcePods: // a pod counts as one pod
			default:
				if store.IsScalarResourceName(name) {
					if pod.Scalar == nil {
						pod.Scalar = map[corev1.ResourceName]int64{}
					}
					pod.Scalar[name] += q.Value()
				}
			}
		}
		total.Add(pod)
	}
	return total
}

// acctStatus writes a pod's status through the status subresource, as its kubelet would.
func acctStatus(t *testing.T, pod *corev1.Pod, mutate func(*corev1.Pod)) {
	t.Helper()
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	mutate(pod)
	if err := env.Client.Status().Update(ctx(), pod); err != nil {
		t.Fatalf("updating the status of %s: %v", pod.Name, err)
	}
}

// acctContainerStatus is a running container's status with what the kubelet allocated and
// what it actuated (the requests it set on the container).
func acctContainerStatus(name string, allocated, actuated corev1.ResourceList) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, Image: "registry.k8s.io/pause:3.10", ImageID: "registry.k8s.io/pause@sha256:0", Ready: true,
		State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		AllocatedResources: allocated,
		Resources:          &corev1.ResourceRequirements{Requests: actuated},
	}
}

// acctList builds a ResourceList from name, quantity pairs.
func acctList(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// acctShow prints resources as sorted name=quantity pairs.
func acctShow(r store.Resources) string {
	var out []string
	for name, q := range r.ResourceList() {
		out = append(out, string(name)+"="+q.String())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
