package handler

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func draSlice(name, nodeName string, devices ...string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-slice-" + name)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.example.com",
			Pool:     resourcev1.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(nodeName),
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: d})
	}
	return s
}

func draClaim(name, nodeName string, devices ...string) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-claim-" + name)}}
	if len(devices) > 0 {
		c.Status.Allocation = &resourcev1.AllocationResult{}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.example.com", Pool: nodeName, Device: d})
		}
	}
	return c
}

func deviceView(t *testing.T, h *Handler, node string) store.NodeDevices {
	t.Helper()
	var v store.NodeDevices
	if !h.ReadStore(stores.DeviceStoreName, func(s store.Store) { v, _ = s.(*devicestore.Store).Node(node) }) {
		t.Fatal("devices store not enabled")
	}
	return v
}

func TestDevices_EventsReachTheDeviceStoreValidated(t *testing.T) {
	h, _ := newHandler(t)
	for _, k := range []stores.Kind{stores.KindResourceSlice, stores.KindResourceClaim, stores.KindDeviceClass} {
		if !slices.Contains(h.WatchedKinds(), k) {
			t.Errorf("kind %s not watched with the devices store enabled", k)
		}
	}
	must(t, h.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}}))
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpus", UID: "uid-gpus"}}
	must(t, h.Add(class))
	must(t, h.Add(draSlice("s", "n1", "gpu0", "gpu1", "gpu2", "gpu3")))
	claim := draClaim("c", "n1", "gpu0", "gpu1")
	must(t, h.Add(claim))
	if v := deviceView(t, h, "n1"); v.Total != 4 || v.Allocated != 2 || v.Free != 2 || v.ByClass["gpus"].Free != 2 {
		t.Errorf("n1: %+v, want 4 total, 2 allocated, 2 free, in class gpus too", v)
	}

	// A rejected event changes nothing.
	if err := h.Add(draClaim("c", "n1", "gpu2")); !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("second add of a claim: %v, want ErrAlreadyExists", err)
	}
	if err := h.Delete(draSlice("other", "n1")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete of an unknown slice: %v, want ErrNotFound", err)
	}
	if err := h.Update(class, nil); !errors.Is(err, store.ErrInvalidObject) {
		t.Errorf("update to nil: %v, want ErrInvalidObject", err)
	}
	if v := deviceView(t, h, "n1"); v.Allocated != 2 || v.Total != 4 {
		t.Errorf("after rejected events: %+v, want them to change nothing", v)
	}

	must(t, h.Update(claim, draClaim("c", "n1")))
	if v := deviceView(t, h, "n1"); v.Allocated != 0 {
		t.Errorf("claim deallocated: %+v, want 0 allocated", v)
	}
	if got := dumpJSON(t, h); !strings.Contains(got, `"devices":{"nodes":{"n1":{"devices":{"total":4,"allocated":0,"free":4`) {
		t.Errorf("dump: %s\nwant n1's devices", got)
	}
	must(t, h.Delete(draClaim("c", "n1")))
	must(t, h.Delete(draSlice("s", "n1")))
	must(t, h.Delete(class))
	if v := deviceView(t, h, "n1"); v.Total != 0 {
		t.Errorf("everything deleted: %+v", v)
	}
	if eventsTotal(t, string(stores.KindResourceSlice), string(stores.OpAdd), "ok") == 0 {
		t.Error("accepted slice adds are not counted")
	}
}

func TestDevices_DisabledStoreLeavesTheKindsUnwatched(t *testing.T) {
	h, _ := newHandler(t, func(c *stores.Config) { c.EnabledStores = []stores.Name{stores.PodGroupStoreName} })
	for _, k := range []stores.Kind{stores.KindResourceSlice, stores.KindResourceClaim, stores.KindDeviceClass} {
		if slices.Contains(h.WatchedKinds(), k) {
			t.Errorf("kind %s watched although no enabled store handles it", k)
		}
	}
	must(t, h.Add(draSlice("s", "n1", "gpu0")))
	if h.ReadStore(stores.DeviceStoreName, func(store.Store) {}) {
		t.Error("a disabled devices store answered")
	}
	if got := dumpJSON(t, h); !strings.Contains(got, `"devices":{}`) {
		t.Errorf("dump of the disabled store is not empty: %s", got)
	}
}

func TestDevices_LastSeenObjectsAndVersions(t *testing.T) {
	h, _ := newHandler(t)
	slice := draSlice("s", "n1", "gpu0")
	slice.ResourceVersion = "7"
	claim := draClaim("c", "n1", "gpu0")
	claim.ResourceVersion = "8"
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpus", UID: "uid-gpus", ResourceVersion: "9"}}
	must(t, h.Add(slice))
	must(t, h.Add(claim))
	must(t, h.Add(class))
	if got, ok := h.LastSeen(stores.KindResourceSlice, "", types.NamespacedName{Name: "s"}); !ok || got != slice {
		t.Error("last-seen slice is not the one added")
	}
	if got, ok := h.LastSeen(stores.KindResourceClaim, "", k8stypes.NamespacedName{Namespace: "ns", Name: "c"}); !ok || got != claim {
		t.Error("last-seen claim is not the one added")
	}
	if got, ok := h.LastSeen(stores.KindDeviceClass, "", types.NamespacedName{Name: "gpus"}); !ok || got != class {
		t.Error("last-seen class is not the one added")
	}
	for kind, want := range map[stores.Kind]map[string]string{
		stores.KindResourceSlice: {"s": "7"},
		stores.KindResourceClaim: {"ns/c": "8"},
		stores.KindDeviceClass:   {"gpus": "9"},
	} {
		if got := h.LastSeenVersions(kind); !maps.Equal(got, want) {
			t.Errorf("%s versions %v, want %v", kind, got, want)
		}
	}
}
