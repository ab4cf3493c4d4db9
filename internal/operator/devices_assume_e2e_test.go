package operator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestDevices_AssumedClaimsThroughTheAPIServer is the claims' assume path, with the feeds
// delivering what the real API server stores: a sibling assumes a claim's allocation and
// the node's view counts it at once; the API then shows the same allocation and it is
// counted once; an assumption forgotten leaves nothing allocated; the claim the status
// update returned, assumed, is ended by the informer's copy of that very version.
func TestDevices_AssumedClaimsThroughTheAPIServer(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	const driver, node = "assume.example.com", "assume-node"
	pool := driver + "/" + node
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "assume-node-gpus"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: driver, NodeName: ptr.To(node), Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
	}}
	for i := range 4 {
		slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu%d", i)})
	}
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")),
		&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "assume-gpus"}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "assume.example.com"`}}},
		}}, slice)

	view := func() store.DeviceCounts {
		var v store.NodeDevices
		op.Cache.ReadStore(stores.DeviceStoreName, func(s store.Store) { v, _ = s.(*devicestore.Store).Node(node) })
		return v.ByPool[pool].DeviceCounts
	}
	want := func(what string, allocated, assumed int) {
		t.Helper()
		if got, w := view(), (store.DeviceCounts{Total: 4, Allocated: allocated, Free: 4 - allocated, Assumed: assumed}); got != w {
			t.Errorf("%s: %+v, want %+v", what, got, w)
		}
	}
	settled := func(allocated int) func() (bool, string) {
		return func() (bool, string) {
			v := view()
			return v == store.DeviceCounts{Total: 4, Allocated: allocated, Free: 4 - allocated}, fmt.Sprintf("%+v", v)
		}
	}
	eventually(t, "the node's 4 devices, none allocated", settled(0))

	newClaim := func(name string) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "assume-gpus", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
			}}},
		}}
		create(t, c)
		if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(c), c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	allocate := func(c *resourcev1.ResourceClaim, devices ...string) *resourcev1.ResourceClaim {
		c = c.DeepCopy()
		c.Status.Allocation = &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}}}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourcev1.DeviceRequestAllocationResult{Request: "gpus", Driver: driver, Pool: node, Device: d})
		}
		return c
	}
	assumed := func(c *resourcev1.ResourceClaim) bool {
		ok, err := op.Cache.IsAssumedClaim(c)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	// Assumed, then forgotten (the scheduler's status update failed): nothing allocated.
	givenUp := allocate(newClaim("given-up"), "gpu2", "gpu3")
	if err := op.Cache.AssumeClaim(givenUp); err != nil {
		t.Fatal(err)
	}
	want("assumed (pending allocation)", 2, 2)
	if err := op.Cache.ForgetClaim(givenUp); err != nil {
		t.Fatal(err)
	}
	want("forgotten", 0, 0)

	// Assumed as read plus the allocation; the API then shows the same allocation.
	pending := allocate(newClaim("two-gpus"), "gpu0", "gpu1")
	if err := op.Cache.AssumeClaim(pending); err != nil {
		t.Fatal(err)
	}
	want("assumed (pending allocation)", 2, 2)
	if got := sample(t, "multicache_assumed_claims"); got != 1 {
		t.Errorf("multicache_assumed_claims = %v, want 1", got)
	}
	if got := sample(t, "multicache_devices", "class", "assume-gpus", "state", "allocated"); got != 2 {
		t.Errorf(`multicache_devices{class="assume-gpus", state="allocated"} = %v, want 2 at once`, got)
	}
	if err := op.Cache.AssumeClaim(allocate(newClaim("same-gpus"), "gpu1", "gpu2")); err == nil {
		t.Error("a second claim assumed gpu1, which two-gpus holds")
	}
	want("after the refused assumption", 2, 2)
	written := pending.DeepCopy()
	if err := env.Client.Status().Update(ctx(), written); err != nil {
		t.Fatalf("writing the allocation: %v", err)
	}
	eventually(t, "the API's allocation ends the assumption, counted once", func() (bool, string) {
		return !assumed(pending) && view() == store.DeviceCounts{Total: 4, Allocated: 2, Free: 2}, fmt.Sprintf("%+v, assumed %v", view(), assumed(pending))
	})
	if got := sample(t, "multicache_assumed_claims"); got != 0 {
		t.Errorf("multicache_assumed_claims = %v once the API shows the allocation, want 0", got)
	}
	if got := sample(t, "multicache_devices", "class", "assume-gpus", "state", "allocated"); got != 2 {
		t.Errorf(`multicache_devices{class="assume-gpus", state="allocated"} = %v, want 2 (counted once)`, got)
	}

	// The claim the status update returned, assumed (AssumeClaimAfterAPICall): counted at
	// once if the informer has not delivered it, and once either way.
	after := allocate(newClaim("after-call"), "gpu3")
	if err := env.Client.Status().Update(ctx(), after); err != nil {
		t.Fatalf("writing the allocation: %v", err)
	}
	if err := op.Cache.AssumeClaim(after); err != nil {
		t.Fatal(err)
	}
	if got := view(); got.Allocated != 3 {
		t.Errorf("the returned claim assumed: %+v, want 3 allocated at once", got)
	}
	eventually(t, "the informer's copy of the returned version ends the assumption", func() (bool, string) {
		return !assumed(after) && view() == store.DeviceCounts{Total: 4, Allocated: 3, Free: 1}, fmt.Sprintf("%+v, assumed %v", view(), assumed(after))
	})
	if errs := op.Cache.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// sample reads the gauge of a gathered metric family whose labels include the given
// name/value pairs; -1 when there is none.
func sample(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
