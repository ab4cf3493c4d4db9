package operator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// nodeDevicesView is the devices part of /debug/cache/nodes/{name}, decoded as JSON
// (Devices nil when the key is absent).
type nodeDevicesView struct {
	Devices *struct {
		store.DeviceCounts
		ByClass map[string]store.DeviceCounts `json:"byClass"`
	} `json:"devices"`
}

// getNodeDevices reads a node's view from the debug server.
func getNodeDevices(t *testing.T, srv *httptest.Server, node string) (nodeDevicesView, error) {
	t.Helper()
	resp, err := http.Get(srv.URL + "/debug/cache/nodes/" + node)
	if err != nil {
		return nodeDevicesView{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nodeDevicesView{}, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var v nodeDevicesView
	if err := json.Unmarshal(body, &v); err != nil {
		return nodeDevicesView{}, fmt.Errorf("%w: %s", err, body)
	}
	return v, nil
}

// deviceGauges reads multicache_devices from the controller-runtime registry: state by
// class ("" for every device); nil when the series is not served.
func deviceGauges(t *testing.T) map[string]map[string]float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == "multicache_devices" })
	if i < 0 {
		return nil
	}
	out := map[string]map[string]float64{}
	for _, m := range families[i].GetMetric() {
		var class, state string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "class":
				class = l.GetValue()
			case "state":
				state = l.GetValue()
			}
		}
		if out[class] == nil {
			out[class] = map[string]float64{}
		}
		out[class][state] = m.GetGauge().GetValue()
	}
	return out
}

func gaugeCounts(g map[string]float64) store.DeviceCounts {
	return store.DeviceCounts{Total: int(g["total"]), Allocated: int(g["allocated"]), Free: int(g["free"])}
}

// TestDevices_NodeViewAndGaugesFromTheAPIServer: a class, a node whose pool has 4 devices in
// its newest generation and 2 in an older one, a claim allocated 2 of them, and a pool of
// one NIC shared by every node: the node's debug view says 4 total, 2 allocated, 2 free for
// the GPU class and 1 NIC, on both nodes; the gauges say the same per class with the shared
// NIC counted once, not once per node; the claim deallocated: 0 allocated in both. A node
// no pool reaches has no devices object.
func TestDevices_NodeViewAndGaugesFromTheAPIServer(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	const gpuDriver, nicDriver = "view-gpu.example.com", "view-nic.example.com"
	class := func(name, driver string) *resourcev1.DeviceClass {
		return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)}}},
		}}
	}
	create(t, withoutUID(ts.MakeNode("view-a", "8", "16Gi")), withoutUID(ts.MakeNode("view-b", "8", "16Gi")),
		class("view-gpus", gpuDriver), class("view-nics", nicDriver))
	srv := httptest.NewServer(op.Debug.Handler())
	defer srv.Close()

	eventually(t, "view-b is cached, with no devices object", func() (bool, string) {
		v, err := getNodeDevices(t, srv, "view-b")
		return err == nil && v.Devices == nil, fmt.Sprintf("%+v %v", v.Devices, err)
	})

	slice := func(name, driver, pool string, gen int64, prefix string, n int) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To("view-a"),
			Pool: resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: 1},
		}}
		for i := range n {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("%s%d", prefix, i)})
		}
		return s
	}
	shared := slice("view-fabric", nicDriver, "fabric", 1, "nic", 1)
	shared.Spec.NodeName, shared.Spec.AllNodes = nil, ptr.To(true)
	create(t, slice("view-a-gen1", gpuDriver, "view-a", 1, "old", 2), slice("view-a-gen2", gpuDriver, "view-a", 2, "gpu", 4), shared)
	// The shared pool reaches every node: gone before the other tests count their nodes'
	// devices, even when this one fails.
	t.Cleanup(func() {
		if err := env.Client.Delete(ctx(), shared); err != nil {
			t.Error(err)
		}
	})
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "two-gpus"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "view-gpus", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
		}}},
	}}
	create(t, claim)
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpus", Driver: gpuDriver, Pool: "view-a", Device: "gpu0"},
		{Request: "gpus", Driver: gpuDriver, Pool: "view-a", Device: "gpu1"},
	}}}
	if err := env.Client.Status().Update(ctx(), claim); err != nil {
		t.Fatalf("allocating the claim: %v", err)
	}

	nic := store.DeviceCounts{Total: 1, Free: 1}
	views := func(gpusAllocated int) func() (bool, string) {
		gpus := store.DeviceCounts{Total: 4, Allocated: gpusAllocated, Free: 4 - gpusAllocated}
		return func() (bool, string) {
			a, errA := getNodeDevices(t, srv, "view-a")
			b, errB := getNodeDevices(t, srv, "view-b")
			if errA != nil || errB != nil || a.Devices == nil || b.Devices == nil {
				return false, fmt.Sprintf("view-a %+v %v, view-b %+v %v", a.Devices, errA, b.Devices, errB)
			}
			node := store.DeviceCounts{Total: 5, Allocated: gpusAllocated, Free: 5 - gpusAllocated}
			ok := a.Devices.DeviceCounts == node && a.Devices.ByClass["view-gpus"] == gpus && a.Devices.ByClass["view-nics"] == nic &&
				b.Devices.ByClass["view-nics"] == nic && b.Devices.ByClass["view-gpus"] == store.DeviceCounts{}
			return ok, fmt.Sprintf("view-a %+v, view-b %+v", *a.Devices, *b.Devices)
		}
	}
	gauges := func(gpusAllocated int) func() (bool, string) {
		gpus := store.DeviceCounts{Total: 4, Allocated: gpusAllocated, Free: 4 - gpusAllocated}
		return func() (bool, string) {
			g := deviceGauges(t)
			all := gaugeCounts(g[""])
			ok := gaugeCounts(g["view-gpus"]) == gpus && gaugeCounts(g["view-nics"]) == nic &&
				all.Total >= 5 && all.Total == all.Allocated+all.Free
			return ok, fmt.Sprintf("%v", g)
		}
	}
	eventually(t, "view-a: 5 devices, 4 GPUs with 2 allocated, 1 shared NIC; view-b the NIC", views(2))
	eventually(t, "the gauges: 4 GPUs with 2 allocated, 1 NIC however many nodes it reaches", gauges(2))

	claim.Status.Allocation = nil
	if err := env.Client.Status().Update(ctx(), claim); err != nil {
		t.Fatalf("deallocating the claim: %v", err)
	}
	eventually(t, "the claim deallocated: no GPU allocated in the view", views(0))
	eventually(t, "the claim deallocated: no GPU allocated in the gauges", gauges(0))
}

// TestDevices_NoViewNorGaugesWhenTheStoreIsOff: with the devices store disabled, a node a
// pool reaches has no devices object and multicache_devices is not served.
func TestDevices_NoViewNorGaugesWhenTheStoreIsOff(t *testing.T) {
	op := startOperator(t, func(o *Options) {
		o.Stores = slices.DeleteFunc(slices.Clone(o.Stores), func(s string) bool { return s == string(stores.DeviceStoreName) })
	})
	create(t, withoutUID(ts.MakeNode("off-node", "8", "16Gi")), &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "off-node-gpus"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "off.example.com", NodeName: ptr.To("off-node"),
			Pool: resourcev1.ResourcePool{Name: "off-node", Generation: 1, ResourceSliceCount: 1}, Devices: []resourcev1.Device{{Name: "gpu0"}}},
	})
	srv := httptest.NewServer(op.Debug.Handler())
	defer srv.Close()
	eventually(t, "off-node is cached", func() (bool, string) {
		_, err := getNodeDevices(t, srv, "off-node")
		return err == nil, fmt.Sprint(err)
	})
	if v, _ := getNodeDevices(t, srv, "off-node"); v.Devices != nil {
		t.Errorf("the devices store is off, yet the node view has devices %+v", *v.Devices)
	}
	if g := deviceGauges(t); g != nil {
		t.Errorf("the devices store is off, yet multicache_devices is served: %v", g)
	}
}
