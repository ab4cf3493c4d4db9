package multicache

import (
	"errors"
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestSiblings_TheAssumerAssumesClaimsThroughTheHandler: the sealed Assumer's claim methods
// reach the handler's assume path: a claim without an allocation is refused (not
// retryable), a device another claim holds is refused (retryable: the holder may forget
// it), an assumption is reported until forgotten, and a forget of nothing is refused.
func TestSiblings_TheAssumerAssumesClaimsThroughTheHandler(t *testing.T) {
	a := assumer{newHandler(t)}
	claim := func(name string, devices ...string) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
		if len(devices) > 0 {
			c.Status.Allocation = &resourcev1.AllocationResult{}
			for _, d := range devices {
				c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
					resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.example.com", Pool: "n1", Device: d})
			}
		}
		return c
	}
	if err := a.AssumeClaim(claim("c")); !errors.Is(err, store.ErrInvalidObject) || Retryable(err) {
		t.Errorf("assuming a claim without an allocation: %v, want ErrInvalidObject, not retryable", err)
	}
	if err := a.AssumeClaim(claim("c", "gpu0")); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.IsAssumedClaim(claim("c")); !ok || err != nil {
		t.Errorf("IsAssumedClaim after the assumption: %v, %v", ok, err)
	}
	if err := a.AssumeClaim(claim("d", "gpu0")); !errors.Is(err, store.ErrDeviceInUse) || !Retryable(err) {
		t.Errorf("assuming a device another claim holds: %v, want ErrDeviceInUse, retryable", err)
	}
	if err := a.ForgetClaim(claim("c")); err != nil {
		t.Error(err)
	}
	if ok, _ := a.IsAssumedClaim(claim("c")); ok {
		t.Error("a forgotten claim is still assumed")
	}
	if err := a.ForgetClaim(claim("c")); !errors.Is(err, store.ErrClaimNotAssumed) {
		t.Errorf("forgetting twice: %v, want ErrClaimNotAssumed", err)
	}
}

// TestRetryable_FalseWhereTheSameCallCannotSucceed: found in review. A sibling that follows
// Retryable must not loop on a refusal only a new read or a configuration change resolves.
func TestRetryable_FalseWhereTheSameCallCannotSucceed(t *testing.T) {
	for err, want := range map[error]bool{
		nil:                    false,
		store.ErrInvalidObject: false,
		fmt.Errorf("wrapped: %w", store.ErrClaimOutOfSync): false,
		store.ErrUIDMismatch:       false,
		store.ErrClaimAllocated:    false,
		store.ErrNoDeviceStore:     false,
		store.ErrDeviceInUse:       true,
		store.ErrPodAlreadyAssumed: true,
		store.ErrClaimNotAssumed:   false,
	} {
		if got := Retryable(err); got != want {
			t.Errorf("Retryable(%v) = %v, want %v", err, got, want)
		}
	}
}

// TestSiblings_ReadANodesDevicesAssumedClaimsIncluded: the Reader answers a node's DRA
// devices, an assumed claim counted at once (allocated and assumed), free again once
// forgotten; a node no pool reaches has none.
func TestSiblings_ReadANodesDevicesAssumedClaimsIncluded(t *testing.T) {
	h := newHandler(t)
	r, a := readerOf(h), assumer{h}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "n1-gpus", UID: "s1", ResourceVersion: "1"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To("n1"),
			Pool:    resourcev1.ResourcePool{Name: "n1", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu0"}, {Name: "gpu1"}}}}
	if err := h.Add(slice); err != nil {
		t.Fatal(err)
	}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "uid-c"}}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "r", Driver: "gpu.example.com", Pool: "n1", Device: "gpu0"}}}}
	if err := a.AssumeClaim(claim); err != nil {
		t.Fatal(err)
	}
	d, ok := r.NodeDevices("n1")
	if want := (store.DeviceCounts{Total: 2, Allocated: 1, Free: 1, Assumed: 1}); !ok || d.DeviceCounts != want || d.ByPool["gpu.example.com/n1"].DeviceCounts != want {
		t.Errorf("n1's devices %+v (%v), want %+v for the node and its pool", d, ok, want)
	}
	if err := a.ForgetClaim(claim); err != nil {
		t.Fatal(err)
	}
	if d, _ := r.NodeDevices("n1"); d.DeviceCounts != (store.DeviceCounts{Total: 2, Free: 2}) {
		t.Errorf("after the forget: %+v, want 2 free", d.DeviceCounts)
	}
	if _, ok := r.NodeDevices("n2"); ok {
		t.Error("a node no pool reaches has devices")
	}
}
