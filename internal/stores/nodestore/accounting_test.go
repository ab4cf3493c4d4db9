package nodestore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// withNodeAllocatableClaim records, as kube-scheduler does with DRANodeAllocatableResources,
// that a claim of the pod was allocated cpu and memory of the node.
func withNodeAllocatableClaim(cpu, memory string) ts.PodOption {
	return func(p *corev1.Pod) {
		p.Status.NodeAllocatableResourceClaimStatuses = append(p.Status.NodeAllocatableResourceClaimStatuses, corev1.NodeAllocatableResourceClaimStatus{
			ResourceClaimName: "cpus", Containers: []string{"main"},
			Mapping: []corev1.NodeAllocatableMappedResources{
				{Name: corev1.ResourceCPU, Quantity: ptr.To(resource.MustParse(cpu))},
				{Name: corev1.ResourceMemory, Quantity: ptr.To(resource.MustParse(memory))},
			},
		})
	}
}

func TestNodes_DRANodeAllocatableResourcesChargesWhatComponentHelpersDoesWithTheOption(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg, err := stores.NewCacheHandler(stores.Config{Accounting: store.Accounting{DRANodeAllocatableResources: on}})
		if err != nil {
			t.Fatal(err)
		}
		s := nodestore.New(cfg)
		s.AddNode(ts.MakeNode("n", "16", "64Gi"))
		plain := ts.MakePod("ns", "plain", ts.OnNode("n"), ts.Requests("1", "1Gi"))
		dra := ts.MakePod("ns", "dra", ts.OnNode("n"), ts.Requests("1", "1Gi"))
		s.AddPod(plain)
		s.AddPod(dra)
		// kube-scheduler records the claim's node-allocatable resources in the pod's status.
		recorded := ts.MakePod("ns", "dra", ts.OnNode("n"), ts.Requests("1", "1Gi"), withNodeAllocatableClaim("2", "3Gi"))
		s.UpdatePod(dra, recorded)

		var want store.Resources
		for _, p := range []*corev1.Pod{plain, recorded} {
			r := store.ResourcesFromList(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{
				UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true,
				UseDRANodeAllocatableResourceClaimStatus: on,
			}))
			r.Pods = 1
			want.Add(r)
		}
		info, _ := s.Get("n")
		if !info.Requested.Equal(want) {
			t.Errorf("DRANodeAllocatableResources=%v: requested %v, component-helpers %v", on, info.Requested.ResourceList(), want.ResourceList())
		}
		if wantCPU := map[bool]int64{false: 2000, true: 4000}[on]; info.Requested.MilliCPU != wantCPU {
			t.Errorf("DRANodeAllocatableResources=%v: %dm cpu requested, want %dm", on, info.Requested.MilliCPU, wantCPU)
		}
		checkInvariants(t, s)
		s.DeletePod(recorded)
		s.DeletePod(plain)
		info, _ = s.Get("n")
		if !info.Requested.Equal(store.Resources{}) {
			t.Errorf("DRANodeAllocatableResources=%v: %v left after every pod went", on, info.Requested.ResourceList())
		}
	}
}
