package devicestore_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func newStore(t *testing.T) *devicestore.Store {
	t.Helper()
	s, _ := newStoreAndConfig(t)
	return s
}

func newStoreAndConfig(t *testing.T) (*devicestore.Store, *stores.CacheHandler) {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return devicestore.New(config), config
}

func newStoreFor(config *stores.CacheHandler) *devicestore.Store { return devicestore.New(config) }

func node(name string, kv ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// slice is a slice of pool `pool` of driver `driver`, generation gen, one of count slices,
// publishing devices named names.
type sliceOpt func(*resourcev1.ResourceSlice)

func onNode(n string) sliceOpt {
	return func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = ptr.To(n) }
}

func allNodes() sliceOpt { return func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr.To(true) } }

func selecting(key, value string) sliceOpt {
	return func(s *resourcev1.ResourceSlice) {
		s.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}},
		}}}
	}
}

// perDevice gives device i the node nodes[i] ("*" for all nodes).
func perDevice(nodes ...string) sliceOpt {
	return func(s *resourcev1.ResourceSlice) {
		s.Spec.PerDeviceNodeSelection = ptr.To(true)
		for i, n := range nodes {
			if n == "*" {
				s.Spec.Devices[i].AllNodes = ptr.To(true)
			} else {
				s.Spec.Devices[i].NodeName = ptr.To(n)
			}
		}
	}
}

func withAttr(name, value string) sliceOpt {
	return func(s *resourcev1.ResourceSlice) {
		for i := range s.Spec.Devices {
			if s.Spec.Devices[i].Attributes == nil {
				s.Spec.Devices[i].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
			}
			s.Spec.Devices[i].Attributes[resourcev1.QualifiedName(name)] = resourcev1.DeviceAttribute{StringValue: ptr.To(value)}
		}
	}
}

func multiAlloc() sliceOpt {
	return func(s *resourcev1.ResourceSlice) {
		for i := range s.Spec.Devices {
			s.Spec.Devices[i].AllowMultipleAllocations = ptr.To(true)
			s.Spec.Devices[i].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("8Gi")}}
		}
	}
}

func makeSlice(name, driver, pool string, gen, count int64, devices []string, opts ...sliceOpt) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: driver,
			Pool:   resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: count},
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: d})
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func devs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// result is one allocation result: driver/pool/device, with a share ID for a shared one.
type result struct {
	driver, pool, device string
	share                string
	admin                bool
}

func makeClaim(ns, name string, results ...result) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}}
	if len(results) == 0 {
		return c
	}
	c.Status.Allocation = &resourcev1.AllocationResult{}
	for _, r := range results {
		dr := resourcev1.DeviceRequestAllocationResult{Request: "req", Driver: r.driver, Pool: r.pool, Device: r.device}
		if r.share != "" {
			dr.ShareID = ptr.To(types.UID(r.share))
			dr.ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}
		}
		if r.admin {
			dr.AdminAccess = ptr.To(true)
		}
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, dr)
	}
	return c
}

func makeClass(name string, exprs ...string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
	for _, e := range exprs {
		c.Spec.Selectors = append(c.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
	}
	return c
}

func counts(total, allocated int) store.DeviceCounts {
	return store.DeviceCounts{Total: total, Allocated: allocated, Free: total - allocated}
}

func nodeView(t *testing.T, s *devicestore.Store, name string) store.NodeDevices {
	t.Helper()
	v, _ := s.Node(name)
	return v
}

func noViolations(t *testing.T, s *devicestore.Store) {
	t.Helper()
	for _, err := range s.CheckInvariants() {
		t.Errorf("invariant: %v", err)
	}
}
