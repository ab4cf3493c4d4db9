package devicestore_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
)

// The objects of `make bench-e2e SIZE=large DEVICES=1` (bench/e2e/devices.go, another
// module): one DeviceClass selecting the driver by CEL, one slice per node with a pool of
// its own, generation 1, of 8 devices with two attributes and a capacity, and 20,000 claims
// allocated one device each, device k/nodes of node k mod nodes.
const (
	e2eDriver                       = "gpu.bench.multicache.dev"
	e2eNodes, e2ePerNode, e2eClaims = 5000, 8, 20000
)

type e2eWorld struct {
	class  *resourcev1.DeviceClass
	nodes  []*corev1.Node
	slices []*resourcev1.ResourceSlice
	claims []*resourcev1.ResourceClaim
}

func newE2EWorld() *e2eWorld {
	w := &e2eWorld{class: makeClass("bench-gpu", fmt.Sprintf("device.driver == %q", e2eDriver))}
	for i := range e2eNodes {
		name := fmt.Sprintf("node-%05d", i)
		w.nodes = append(w.nodes, node(name))
		s := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-gpu", UID: types.UID("uid-" + name), ResourceVersion: "1", Generation: 1},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   e2eDriver,
				Pool:     resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1},
				NodeName: ptr.To(name),
			},
		}
		for d := range e2ePerNode {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
				Name: fmt.Sprintf("gpu-%d", d),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"model": {StringValue: ptr.To("bench-80g")},
					"index": {IntValue: ptr.To(int64(d))},
				},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
			})
		}
		w.slices = append(w.slices, s)
	}
	for k := range e2eClaims {
		n := w.nodes[k%e2eNodes].Name
		c := makeClaim(fmt.Sprintf("ns-%d", k%100), fmt.Sprintf("claim-%06d", k), result{e2eDriver, n, fmt.Sprintf("gpu-%d", k/e2eNodes), "", false})
		c.ResourceVersion = "1"
		w.claims = append(w.claims, c)
	}
	return w
}

// fill feeds the world to a new store: the class, the nodes, the slices, the claims (the
// informers of a cold start deliver them in parallel; the class is one object).
func (w *e2eWorld) fill(b *testing.B) *devicestore.Store {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	s := newStoreFor(config)
	s.AddDeviceClass(w.class)
	for _, n := range w.nodes {
		s.AddNode(n)
	}
	for _, sl := range w.slices {
		s.AddResourceSlice(sl)
	}
	for _, c := range w.claims {
		s.AddResourceClaim(c)
	}
	return s
}

// cpuTime is the process's user and system CPU so far: on a shared machine ns/op counts
// the time other processes had the cores, CPU does not.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDevices_BenchE2EFill is the devices store's part of a cold start of `make
// bench-e2e SIZE=large DEVICES=1`: its objects, built beforehand (the informers decode
// them), fed to a new store. cpu-ns/device is the process's CPU (the garbage collector's
// included) per device, with its half claim: the bench's "CPU per device" less decoding,
// the feeds and the handler.
func BenchmarkDevices_BenchE2EFill(b *testing.B) {
	w := newE2EWorld()
	devices := e2eNodes * e2ePerNode
	var cpu time.Duration
	var s *devicestore.Store
	for b.Loop() {
		start := cpuTime(b)
		s = w.fill(b)
		cpu += cpuTime(b) - start
	}
	if all, byClass := s.ClusterCounts(); all != counts(devices, e2eClaims) || byClass["bench-gpu"] != all {
		b.Fatalf("filled: %+v, by class %+v", all, byClass)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(devices), "cpu-ns/device")
}

// BenchmarkDevices_BenchE2ERepublish is every driver of a filled store publishing its pool
// again in the next generation, the same devices in new objects (as a driver does when it
// restarts, or changes something else about the pool): every slice updated, then back.
func BenchmarkDevices_BenchE2ERepublish(b *testing.B) {
	w := newE2EWorld()
	s := w.fill(b)
	next := newE2EWorld()
	for _, sl := range next.slices {
		sl.Spec.Pool.Generation, sl.Generation, sl.ResourceVersion = 2, 2, "2"
	}
	devices := e2eNodes * e2ePerNode
	var cpu time.Duration
	for b.Loop() {
		start := cpuTime(b)
		for i, sl := range next.slices {
			s.UpdateResourceSlice(w.slices[i], sl)
		}
		cpu += cpuTime(b) - start
		w, next = next, w
	}
	if all, _ := s.ClusterCounts(); all != counts(devices, e2eClaims) {
		b.Fatalf("republished: %+v", all)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(devices), "cpu-ns/device")
}
