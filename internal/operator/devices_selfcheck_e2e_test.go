package operator

import (
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestDevices_TheVerifyLoopReportsBadDeviceInputs: what the real API server accepts but no
// consistent cluster holds (a claim allocated a device no slice publishes, two claims
// holding one dedicated device, a slice for a node that does not exist) is reported by the
// verify loop, each finding by name, and counted in multicache_invariant_violations_total;
// the node's counts stay whole, and the findings go with the objects.
func TestDevices_TheVerifyLoopReportsBadDeviceInputs(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	const driver, node = "selfcheck.example.com", "selfcheck-node"
	slice := func(name, nodeName string, devices ...string) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To(nodeName), Pool: resourcev1.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: 1},
		}}
		for _, d := range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: d})
		}
		return s
	}
	claim := func(name, device string) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "selfcheck-gpus"},
			}}},
		}}
		create(t, c)
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: driver, Pool: node, Device: device},
		}}}
		if err := env.Client.Status().Update(ctx(), c); err != nil {
			t.Fatalf("allocating claim %s: %v", name, err)
		}
		return c
	}
	ghost := slice("selfcheck-ghost", "selfcheck-no-such-node", "g0")
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")), slice("selfcheck-node-gpus", node, "gpu0", "gpu1"), ghost)
	bad := []client.Object{ghost, claim("unpublished", "gpu9"), claim("first", "gpu0"), claim("second", "gpu0")}
	t.Cleanup(func() {
		for _, o := range bad {
			_ = env.Client.Delete(ctx(), o)
		}
	})

	want := []string{
		"devices: ResourceSlice selfcheck-ghost is for node selfcheck-no-such-node, which the cache does not know",
		"devices: claims " + ns + "/unpublished hold device selfcheck.example.com/selfcheck-node/gpu9, which no ResourceSlice publishes",
		"devices: device selfcheck.example.com/selfcheck-node/gpu0 is held by claims " + ns + "/first, " + ns + "/second: a device not shared is held by one claim at most",
	}
	slices.Sort(want)
	var before float64
	eventually(t, "the verify loop reports the three bad inputs", func() (bool, string) {
		before = violationsTotal(t)
		res, err := op.Verify.Run(ctx())
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, v := range res.Violations {
			if strings.Contains(v.Error(), "selfcheck") {
				got = append(got, v.Error())
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want), strings.Join(got, "\n")
	})
	if d := violationsTotal(t) - before; d < 3 {
		t.Errorf("multicache_invariant_violations_total grew by %v in the run that found them, want at least 3", d)
	}
	var v store.NodeDevices
	op.Cache.ReadStore(stores.DeviceStoreName, func(s store.Store) { v, _ = s.(*devicestore.Store).Node(node) })
	if got := v.ByPool[driver+"/"+node].DeviceCounts; got != (store.DeviceCounts{Total: 2, Allocated: 1, Free: 1}) {
		t.Errorf("the node's pool: %+v, want 2 devices, gpu0 allocated once, 1 free", got)
	}

	for _, o := range bad {
		if err := env.Client.Delete(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "no finding once the bad inputs are gone", func() (bool, string) {
		res, err := op.Verify.Run(ctx())
		if err != nil {
			return false, err.Error()
		}
		return len(res.Violations) == 0, strings.Join(errorStrings(res.Violations), "\n")
	})
}

func violationsTotal(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.InvariantViolationsTotal.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func errorStrings(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, err := range errs {
		out = append(out, err.Error())
	}
	return out
}
