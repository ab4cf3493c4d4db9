package store_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// claimStatus is a pod's node-allocatable claim status: mapped quantities, per-pod and
// per-container overheads (name, quantity pairs).
func claimStatus(claim string, containers []string, mapping, perPod, perContainer []string) corev1.NodeAllocatableResourceClaimStatus {
	st := corev1.NodeAllocatableResourceClaimStatus{ResourceClaimName: claim, Containers: containers}
	for i := 0; i+1 < len(mapping); i += 2 {
		st.Mapping = append(st.Mapping, corev1.NodeAllocatableMappedResources{Name: corev1.ResourceName(mapping[i]), Quantity: ptr.To(resource.MustParse(mapping[i+1]))})
	}
	for i := 0; i+1 < len(perPod); i += 2 {
		st.Overhead = append(st.Overhead, corev1.NodeAllocatableOverheadResources{Name: corev1.ResourceName(perPod[i]), PerPod: ptr.To(resource.MustParse(perPod[i+1]))})
	}
	for i := 0; i+1 < len(perContainer); i += 2 {
		st.Overhead = append(st.Overhead, corev1.NodeAllocatableOverheadResources{Name: corev1.ResourceName(perContainer[i]), PerContainer: ptr.To(resource.MustParse(perContainer[i+1]))})
	}
	return st
}

// helperRequests is the reference: component-helpers' PodRequests with kube-scheduler
// v1.37.1's options (PodInfo.CalculateResource) and the DRANodeAllocatableResources gate.
func helperRequests(pod *corev1.Pod, gate bool) store.Resources {
	r := store.ResourcesFromList(resourcehelper.PodRequests(pod.DeepCopy(), resourcehelper.PodResourcesOptions{
		UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true,
		UseDRANodeAllocatableResourceClaimStatus: gate,
	}))
	r.Pods = 1
	return r
}

func TestAccounting_DRANodeAllocatableResourcesIsComponentHelpersWithTheOption(t *testing.T) {
	withClaims := func(statuses ...corev1.NodeAllocatableResourceClaimStatus) ts.PodOption {
		return func(p *corev1.Pod) { p.Status.NodeAllocatableResourceClaimStatuses = statuses }
	}
	twoContainers := func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}})
	}
	podLevel := func(p *corev1.Pod) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		// gated is whether the gate changes the charge.
		gated bool
	}{
		{"no claim status", ts.MakePod("ns", "plain", ts.Requests("1", "1Gi")), false},
		{"mapped cpu and memory", ts.MakePod("ns", "mapped", ts.Requests("1", "1Gi"),
			withClaims(claimStatus("c1", []string{"main"}, []string{"cpu", "2", "memory", "3Gi"}, nil, nil))), true},
		{"per-pod and per-container overheads, two claims", ts.MakePod("ns", "overheads", ts.Requests("1", "1Gi"), twoContainers,
			withClaims(claimStatus("c1", []string{"main", "side"}, []string{"cpu", "1"}, []string{"memory", "256Mi"}, []string{"cpu", "100m"}),
				claimStatus("c2", []string{"side"}, nil, nil, []string{"hugepages-2Mi", "4Mi"}))), true},
		{"pod-level memory replaces the claim's memory", ts.MakePod("ns", "podlevel", ts.Requests("1", "1Gi"), podLevel,
			withClaims(claimStatus("c1", []string{"main"}, []string{"cpu", "2", "memory", "3Gi"}, nil, nil))), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			off, on := store.Accounting{}, store.Accounting{DRANodeAllocatableResources: true}
			if got, want := off.PodRequests(tc.pod), helperRequests(tc.pod, false); !got.Equal(want) {
				t.Errorf("gate off: %v, component-helpers %v", got.ResourceList(), want.ResourceList())
			}
			if got, want := store.PodRequests(tc.pod), helperRequests(tc.pod, false); !got.Equal(want) {
				t.Errorf("PodRequests (the default): %v, component-helpers without the option %v", got.ResourceList(), want.ResourceList())
			}
			if got, want := on.PodRequests(tc.pod), helperRequests(tc.pod, true); !got.Equal(want) {
				t.Errorf("gate on: %v, component-helpers with UseDRANodeAllocatableResourceClaimStatus %v", got.ResourceList(), want.ResourceList())
			}
			if differs := !on.PodRequests(tc.pod).Equal(off.PodRequests(tc.pod)); differs != tc.gated {
				t.Errorf("the gate changes the charge: %v, want %v (on %v, off %v)", differs, tc.gated,
					on.PodRequests(tc.pod).ResourceList(), off.PodRequests(tc.pod).ResourceList())
			}
		})
	}
}
