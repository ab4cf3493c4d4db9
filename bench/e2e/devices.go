package e2e

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// The DRA objects of a population with devices (-devices, DEVICES=1): one ResourceSlice per
// node publishing its devices in a pool of its own, one DeviceClass selecting them all, and
// claims allocated devices the way kube-scheduler writes an allocation (status.allocation
// with the node in its node selector).
const (
	// DeviceDriver is the driver of every populated device.
	DeviceDriver = "gpu.bench.multicache.dev"
	// DeviceClassName names the one DeviceClass.
	DeviceClassName = "bench-gpu"
	// DefaultDevicesPerNode and DefaultClaimsPerNode are what -devices populates: at large,
	// 5,000 nodes × 8 devices and 20,000 allocated claims.
	DefaultDevicesPerNode = 8
	DefaultClaimsPerNode  = 4
	// claimRequest names the one request of every claim.
	claimRequest = "gpu"
)

// ResourceSliceName names the slice of node i.
func ResourceSliceName(i int) string { return NodeName(i) + "-gpu" }

// DeviceName names device d of a node's pool.
func DeviceName(d int) string { return fmt.Sprintf("gpu-%d", d) }

// MakeDeviceClass returns the class of every populated device, selected by a CEL expression
// as a driver's class is.
func MakeDeviceClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: DeviceClassName},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", DeviceDriver)},
		}}},
	}
}

// MakeResourceSlice returns the slice of node i: a pool named after the node, generation 1
// and complete in one slice, with devices devices of 80Gi each.
func MakeResourceSlice(i, devices int) *resourcev1.ResourceSlice {
	node := NodeName(i)
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: ResourceSliceName(i)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   DeviceDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name: DeviceName(d),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"model": {StringValue: ptr.To("bench-80g")},
				"index": {IntValue: ptr.To(int64(d))},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
		})
	}
	return s
}

// MakeResourceClaim returns claim k with its allocation (written through the status
// subresource after the create): device k / nodes of node k mod nodes, so that every node
// has the same number of devices taken.
func MakeResourceClaim(k int, size Size) *resourcev1.ResourceClaim {
	node := NodeName(k % size.Nodes)
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceName(k % size.Namespaces()), Name: fmt.Sprintf("claim-%06d", k)},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: claimRequest, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: DeviceClassName},
		}}}},
		Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
				Request: claimRequest, Driver: DeviceDriver, Pool: node, Device: DeviceName(k / size.Nodes),
			}}},
			NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}},
		}},
	}
}

// checkDRAServed fails with what to do when the API server does not serve the DRA kinds
// the population writes.
func checkDRAServed(c client.Client) error {
	for _, kind := range []string{"ResourceSlice", "ResourceClaim", "DeviceClass"} {
		gk := resourcev1.SchemeGroupVersion.WithKind(kind).GroupKind()
		if _, err := c.RESTMapper().RESTMapping(gk, resourcev1.SchemeGroupVersion.Version); err != nil {
			if apimeta.IsNoMatchError(err) {
				return fmt.Errorf("devices: the API server does not serve %s %s: start it with --runtime-config=%s=true, or run without -devices (DEVICES=1)",
					resourcev1.SchemeGroupVersion, kind, resourcev1.SchemeGroupVersion)
			}
			return fmt.Errorf("devices: looking up %s: %w", gk, err)
		}
	}
	return nil
}

// devicesSteps are the population steps of the DRA objects (none without devices).
func devicesSteps(c client.Client, size Size) []populateStep {
	if size.DevicesPerNode == 0 {
		return nil
	}
	return []populateStep{
		{"deviceclasses", size.DeviceClasses(), func(ctx context.Context, _ int) error { return harness.Create(ctx, c, MakeDeviceClass()) }},
		{"resourceslices", size.ResourceSlices(), func(ctx context.Context, i int) error {
			return harness.Create(ctx, c, MakeResourceSlice(i, size.DevicesPerNode))
		}},
		{"claims", size.Claims(), func(ctx context.Context, k int) error {
			obj := MakeResourceClaim(k, size)
			return createWithStatus(ctx, c, obj, func() { obj.Status = MakeResourceClaim(k, size).Status })
		}},
	}
}
