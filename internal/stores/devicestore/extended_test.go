package devicestore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
)

func TestDevices_ExtendedResourcesServedByAClassAreDRAsWhereTheNodeListsNone(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	gpus := makeClass("gpus", `device.driver == "gpu.example.com"`)
	gpus.Spec.ExtendedResourceName = ptr.To("example.com/gpu")
	s.AddDeviceClass(gpus)
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	// The claim kube-scheduler creates for a pod asking for example.com/gpu: 1 (named in
	// the pod's status.extendedResourceClaimStatus) is counted like any claim.
	s.AddResourceClaim(makeClaim("ns", "pod-extended-resources-abcde", result{gpu, "n1", "gpu0", "", false}))

	none := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
	if class, ok := s.ServedByDRA(none, "example.com/gpu"); !ok || class != "gpus" {
		t.Errorf("node without example.com/gpu: served by %q, %v; want class gpus", class, ok)
	}
	if class, ok := s.ServedByDRA(none, "deviceclass.resource.kubernetes.io/gpus"); !ok || class != "gpus" {
		t.Errorf("the implicit name: served by %q, %v; want class gpus", class, ok)
	}
	if v := nodeView(t, s, "n1"); v.ByClass["gpus"] != counts(2, 1) {
		t.Errorf("class gpus on n1: %+v, want the extended-resource claim's device allocated", v.ByClass["gpus"])
	}
	listed := corev1.ResourceList{"example.com/gpu": resource.MustParse("4")}
	if _, ok := s.ServedByDRA(listed, "example.com/gpu"); ok {
		t.Error("a node listing example.com/gpu: its device plugin serves it, not DRA")
	}
	if _, ok := s.ServedByDRA(none, "example.com/fpga"); ok {
		t.Error("a resource no class serves is not DRA's")
	}
	if d := s.Dump().(devicestore.Dump); d.ExtendedResources["example.com/gpu"] != "gpus" {
		t.Errorf("dump extended resources %v, want example.com/gpu served by gpus", d.ExtendedResources)
	}
	s.DeleteDeviceClass(gpus)
	if _, ok := s.ServedByDRA(none, "example.com/gpu"); ok {
		t.Error("class deleted: example.com/gpu is still DRA's")
	}
}
