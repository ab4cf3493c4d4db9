package devicestore_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestDevices_ThroughTheAPIServer is the devices scenario on objects the real API server
// validated and stored: a class, a node whose pool has 4 devices in its newest generation
// and 2 in an older one, a claim allocated 2 of them (status written as kube-scheduler
// writes it): 4 total, 2 allocated, 2 free, for the node and for the class; the claim
// deallocated: 0 allocated. The objects are read back from the API and fed to the store
// directly (the operator's own feeds are tested in internal/operator: TestDevices_FedFromTheAPIServer).
func TestDevices_ThroughTheAPIServer(t *testing.T) {
	env := testsupport.StartForTest(t, testsupport.StartOptions{})
	ctx := context.Background()
	c := env.Client
	create := func(obj client.Object) {
		t.Helper()
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpus"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
	}})
	create(makeSlice("n1-gen1", gpu, "n1", 1, 1, devs("old", 2), onNode("n1")))
	create(makeSlice("n1-gen2", gpu, "n1", 2, 1, devs("gpu", 4), onNode("n1")))
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "two-gpus"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpus", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
		}}},
	}}
	create(claim)
	claim.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpus", Driver: gpu, Pool: "n1", Device: "gpu0"},
			{Request: "gpus", Driver: gpu, Pool: "n1", Device: "gpu1"},
		}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"},
		}}}}},
	}
	if err := c.Status().Update(ctx, claim); err != nil {
		t.Fatalf("allocating the claim: %v", err)
	}

	s := newStore(t)
	var nodes corev1.NodeList
	var classes resourcev1.DeviceClassList
	var slices resourcev1.ResourceSliceList
	var claims resourcev1.ResourceClaimList
	for _, l := range []client.ObjectList{&nodes, &classes, &slices, &claims} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for i := range nodes.Items {
		s.AddNode(&nodes.Items[i])
	}
	for i := range classes.Items {
		s.AddDeviceClass(&classes.Items[i])
	}
	for i := range slices.Items {
		s.AddResourceSlice(&slices.Items[i])
	}
	for i := range claims.Items {
		s.AddResourceClaim(&claims.Items[i])
	}
	v := nodeView(t, s, "n1")
	if v.DeviceCounts != counts(4, 2) || v.ByClass["gpus"] != counts(4, 2) {
		t.Errorf("n1: %+v, class gpus %+v; want 4 total, 2 allocated, 2 free for both", v.DeviceCounts, v.ByClass["gpus"])
	}
	noViolations(t, s)

	allocated := claims.Items[0].DeepCopy()
	deallocated := allocated.DeepCopy()
	deallocated.Status.Allocation = nil
	if err := c.Status().Update(ctx, deallocated); err != nil {
		t.Fatalf("deallocating the claim: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(deallocated), deallocated); err != nil {
		t.Fatal(err)
	}
	s.UpdateResourceClaim(allocated, deallocated)
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(4, 0) || v.ByClass["gpus"] != counts(4, 0) {
		t.Errorf("claim deallocated: %+v, class %+v; want 0 allocated", v.DeviceCounts, v.ByClass["gpus"])
	}
	if deallocated.Status.Allocation != nil {
		t.Error("the API server kept the allocation")
	}
}
