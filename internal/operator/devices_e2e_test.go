package operator

import (
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestDevices_FedFromTheAPIServer is the devices scenario through the feeds: a class, a node
// whose pool has 4 devices in its newest generation and 2 in an older one, a claim allocated
// 2 of them: the node's view says 4 total, 2 allocated, 2 free, for the node and the class;
// the claim deallocated: 0 allocated.
func TestDevices_FedFromTheAPIServer(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	const driver, node = "gpu.example.com", "dra-node"
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")),
		&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "dra-gpus"}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
		}})
	slice := func(name string, gen int64, prefix string, n int) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To(node),
			Pool: resourcev1.ResourcePool{Name: node, Generation: gen, ResourceSliceCount: 1},
		}}
		for i := range n {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("%s%d", prefix, i)})
		}
		return s
	}
	create(t, slice("dra-node-gen1", 1, "old", 2), slice("dra-node-gen2", 2, "gpu", 4))
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "two-gpus"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "dra-gpus", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
		}}},
	}}
	create(t, claim)
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpus", Driver: driver, Pool: node, Device: "gpu0"},
		{Request: "gpus", Driver: driver, Pool: node, Device: "gpu1"},
	}}}
	if err := env.Client.Status().Update(ctx(), claim); err != nil {
		t.Fatalf("allocating the claim: %v", err)
	}
	devices := func(total, allocated int) func() (bool, string) {
		want := store.DeviceCounts{Total: total, Allocated: allocated, Free: total - allocated}
		return func() (bool, string) {
			var v store.NodeDevices
			var found bool
			op.Cache.ReadStore(stores.DeviceStoreName, func(s store.Store) {
				v, found = s.(*devicestore.Store).Node(node)
			})
			return found && v.DeviceCounts == want && v.ByClass["dra-gpus"] == want, fmt.Sprintf("node %+v (found %v), class %+v", v.DeviceCounts, found, v.ByClass["dra-gpus"])
		}
	}
	eventually(t, "4 devices, 2 allocated, on the node and for the class", devices(4, 2))

	claim.Status.Allocation = nil
	if err := env.Client.Status().Update(ctx(), claim); err != nil {
		t.Fatalf("deallocating the claim: %v", err)
	}
	eventually(t, "the claim deallocated: 0 allocated", devices(4, 0))
	if errs := op.Cache.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}
