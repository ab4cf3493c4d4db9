package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Sizes of the DRANodeAllocatableResources differential.
const (
	nodeAllocSeed  = 20261127
	nodeAllocPods  = 3000
	nodeAllocNodes = 20
)

// TestDifferential_DRANodeAllocatableResourcesMatchKubeScheduler turns kube-scheduler's
// DRANodeAllocatableResources feature gate on (alpha, off by default) and multicache's
// mirror of it (stores.Accounting, --dra-node-allocatable-resources), then charges the
// same random pods — the accounting differential's valid pods, with random
// pod.status.nodeAllocatableResourceClaimStatuses added (mapped cpu, memory and hugepages,
// per-pod and per-container overheads, one to three claims) — through multicache's handler
// and kube-scheduler v1.37.1's framework.NodeInfo, then updates a third of them (a claim
// status recorded, changed or cleared), and compares every event's delta and every node.
// With the gate off on both sides, the same pods must charge no claim resource: that half
// checks that the statuses are not counted when the gate is off.
func TestDifferential_DRANodeAllocatableResourcesMatchKubeScheduler(t *testing.T) {
	for _, gate := range []bool{true, false} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.DRANodeAllocatableResources, gate)
			nodeAllocatableRun(t, gate)
		})
	}
}

func nodeAllocatableRun(t *testing.T, gate bool) {
	cfg, err := stores.NewCacheHandler(stores.Config{
		EnabledStores: []stores.Name{stores.NodeStoreName, stores.PodStoreName},
		Accounting:    store.Accounting{DRANodeAllocatableResources: gate},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(cfg, logr.Discard())
	g := &podGen{r: rand.New(rand.NewPCG(nodeAllocSeed, nodeAllocSeed)), t: t}
	r := rand.New(rand.NewPCG(nodeAllocSeed, 1))
	kube := map[string]*framework.NodeInfo{}
	nodes := make([]string, nodeAllocNodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("na-node-%02d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodes[i], UID: types.UID("uid-" + nodes[i])}}
		must(t, h.Add(node))
		kube[nodes[i]] = framework.NewNodeInfo()
		kube[nodes[i]].SetNode(node)
	}
	divergent, withClaims := 0, 0
	check := func(what string, pod *corev1.Pod, mcBefore, kubeBefore charge) {
		name := pod.Spec.NodeName
		if diffs := compareDelta(mcBefore, mcRequested(t, h, name), kubeBefore, kubeRequested(kube[name])); len(diffs) > 0 {
			divergent++
			if divergent <= 5 {
				t.Errorf("%s %s diverges: %v\nclaims: %+v\n%s", what, pod.Name, diffs, pod.Status.NodeAllocatableResourceClaimStatuses, describePod(pod))
			}
		}
	}
	pods := make([]*corev1.Pod, nodeAllocPods)
	lists := sharedLists{}
	for i := range pods {
		pod := g.pod(i, nodes[i%nodeAllocNodes])
		if r.IntN(3) > 0 {
			pod.Status.NodeAllocatableResourceClaimStatuses = randomClaimStatuses(r, pod)
			withClaims++
		}
		pods[i] = lists.sharePod(pod)
		name := pod.Spec.NodeName
		mcBefore, kubeBefore := mcRequested(t, h, name), kubeRequested(kube[name])
		must(t, h.Add(pod))
		kube[name].AddPod(pod.DeepCopy())
		check("add of", pod, mcBefore, kubeBefore)
	}
	for i, old := range pods {
		if i%3 != 0 {
			continue
		}
		pod := old.DeepCopy()
		pod.ResourceVersion = "2"
		switch r.IntN(3) {
		case 0:
			pod.Status.NodeAllocatableResourceClaimStatuses = nil
		default:
			pod.Status.NodeAllocatableResourceClaimStatuses = randomClaimStatuses(r, pod)
		}
		lists.sharePod(pod)
		name := pod.Spec.NodeName
		mcBefore, kubeBefore := mcRequested(t, h, name), kubeRequested(kube[name])
		must(t, h.Update(old, pod))
		if err := kube[name].RemovePod(logr.Discard(), old); err != nil {
			t.Fatal(err)
		}
		kube[name].AddPod(pod.DeepCopy())
		check("update of", pod, mcBefore, kubeBefore)
		pods[i] = pod
	}
	divergentNodes := 0
	for _, name := range nodes {
		info, _ := h.NodeInfo(name)
		if diffs := compareResources(info.Requested, kube[name].Requested, int64(len(kube[name].Pods))); len(diffs) > 0 {
			divergentNodes++
			t.Errorf("node %s diverges: %v", name, diffs)
		}
	}
	for _, err := range h.CheckInvariants() {
		t.Error("multicache invariant:", err)
	}
	t.Logf("gate %v: %d pods (%d with node-allocatable claim statuses), %d updated: %d events and %d nodes divergent",
		gate, nodeAllocPods, withClaims, (nodeAllocPods+2)/3, divergent, divergentNodes)
}

// randomClaimStatuses returns one to three claim statuses over the pod's containers.
func randomClaimStatuses(r *rand.Rand, pod *corev1.Pod) []corev1.NodeAllocatableResourceClaimStatus {
	var containers []string
	for _, c := range pod.Spec.Containers {
		containers = append(containers, c.Name)
	}
	quantity := func(name corev1.ResourceName) *resource.Quantity {
		switch name {
		case corev1.ResourceCPU:
			return ptr.To(resource.MustParse([]string{"100m", "1", "2500m", "3"}[r.IntN(4)]))
		case corev1.ResourceMemory:
			return ptr.To(resource.MustParse([]string{"64Mi", "1Gi", "1.5Gi", "300M"}[r.IntN(4)]))
		default:
			return ptr.To(resource.MustParse([]string{"2Mi", "4Mi"}[r.IntN(2)]))
		}
	}
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "hugepages-2Mi"}
	var out []corev1.NodeAllocatableResourceClaimStatus
	for i := range 1 + r.IntN(3) {
		st := corev1.NodeAllocatableResourceClaimStatus{ResourceClaimName: fmt.Sprintf("claim-%d", i)}
		for _, c := range containers {
			if r.IntN(2) == 0 {
				st.Containers = append(st.Containers, c)
			}
		}
		for _, n := range names {
			switch r.IntN(4) {
			case 0:
				st.Mapping = append(st.Mapping, corev1.NodeAllocatableMappedResources{Name: n, Quantity: quantity(n)})
			case 1:
				st.Overhead = append(st.Overhead, corev1.NodeAllocatableOverheadResources{Name: n, PerPod: quantity(n)})
			case 2:
				st.Overhead = append(st.Overhead, corev1.NodeAllocatableOverheadResources{Name: n, PerPod: quantity(n), PerContainer: quantity(n)})
			}
		}
		out = append(out, st)
	}
	return out
}
