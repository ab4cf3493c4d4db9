package bench

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
)

// largeDRA are the DRA objects of `make bench-e2e SIZE=large DEVICES=1` (bench/e2e/devices.go,
// another module) with their nodes: 5,000 nodes, one slice of 8 devices each, one class
// selecting the driver by CEL, 20,000 claims allocated one device each.
type largeDRA struct {
	class  *resourcev1.DeviceClass
	nodes  []*corev1.Node
	slices []*resourcev1.ResourceSlice
	claims []*resourcev1.ResourceClaim
}

const largeDRANodes, largeDRAPerNode, largeDRAClaims = 5000, 8, 20000

func newLargeDRA() *largeDRA {
	const driver = "gpu.bench.multicache.dev"
	w := &largeDRA{class: &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-gpu", UID: "uid-bench-gpu", ResourceVersion: "1"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)},
		}}},
	}}
	for i := range largeDRANodes {
		name := fmt.Sprintf("node-%05d", i)
		w.nodes = append(w.nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"}})
		s := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-gpu", UID: types.UID("uid-slice-" + name), ResourceVersion: "1"},
			Spec:       resourcev1.ResourceSliceSpec{Driver: driver, Pool: resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1}, NodeName: ptr.To(name)},
		}
		for d := range largeDRAPerNode {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
				Name: fmt.Sprintf("gpu-%d", d),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"model": {StringValue: ptr.To("bench-80g")}, "index": {IntValue: ptr.To(int64(d))},
				},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
			})
		}
		w.slices = append(w.slices, s)
	}
	for k := range largeDRAClaims {
		node := w.nodes[k%largeDRANodes].Name
		name := fmt.Sprintf("claim-%06d", k)
		w.claims = append(w.claims, &resourcev1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", k%100), Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
			Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
				Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: node, Device: fmt.Sprintf("gpu-%d", k/largeDRANodes)}},
			}}},
		})
	}
	return w
}

// fill feeds the objects to a new multicache with every store, as its feeds do (Sync*).
func (w *largeDRA) fill(b *testing.B) *handler.Handler {
	h := NewMulticache(nil)
	mustB(b, h.Sync(types.NamespacedName{Name: w.class.Name}, w.class, true, handler.Current))
	for _, n := range w.nodes {
		mustB(b, h.Sync(types.NamespacedName{Name: n.Name}, n, true, handler.Current))
	}
	for _, s := range w.slices {
		mustB(b, h.Sync(types.NamespacedName{Name: s.Name}, s, true, handler.Current))
	}
	for _, c := range w.claims {
		mustB(b, h.Sync(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, c, true, handler.Current))
	}
	return h
}

func mustB(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDevices_HandlerFill is bench-e2e's large DRA objects (and their nodes) through
// multicache's handler with every store: the in-process part of a cold start's CPU per
// device, less the informers' decoding and the feeds' queues. Compare with the devices
// store's own BenchmarkDevices_BenchE2EFill for the handler's and the other stores' share.
func BenchmarkDevices_HandlerFill(b *testing.B) {
	w := newLargeDRA()
	var cpu time.Duration
	for b.Loop() {
		start := processCPU(b)
		w.fill(b)
		cpu += processCPU(b) - start
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(largeDRANodes*largeDRAPerNode), "cpu-ns/device")
}

// BenchmarkDevices_MetricsGather is one gather of multicache's collector at that size: what
// every read of /metrics costs (controller-runtime's handler gathers every collector
// whatever names are asked for), under the cache's read lock.
func BenchmarkDevices_MetricsGather(b *testing.B) {
	h := newLargeDRA().fill(b)
	reg := prometheus.NewRegistry()
	mustB(b, reg.Register(handler.NewCollector(h)))
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
