package devicestore_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
)

// A class serves its extended resource names to the NodeStore (through the CacheHandler, as
// production reads them) until it is deleted; where the node lists the resource its device
// plugin serves it instead, the NodeStore's rule (nodestore's extended tests).
func TestDevices_AClassServesItsExtendedResourcesUntilDeleted(t *testing.T) {
	s, config := newStoreAndConfig(t)
	s.AddNode(node("n1"))
	gpus := makeClass("gpus", `device.driver == "gpu.example.com"`)
	gpus.Spec.ExtendedResourceName = ptr.To("example.com/gpu")
	s.AddDeviceClass(gpus)
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	// The claim kube-scheduler creates for a pod asking for example.com/gpu: 1 (named in
	// the pod's status.extendedResourceClaimStatus) is counted like any claim.
	s.AddResourceClaim(makeClaim("ns", "pod-extended-resources-abcde", result{gpu, "n1", "gpu0", "", false}))

	if class, ok := config.ExtendedResourceClass("example.com/gpu"); !ok || class != "gpus" {
		t.Errorf("example.com/gpu: served by %q, %v; want class gpus", class, ok)
	}
	if class, ok := config.ExtendedResourceClass("deviceclass.resource.kubernetes.io/gpus"); !ok || class != "gpus" {
		t.Errorf("the implicit name: served by %q, %v; want class gpus", class, ok)
	}
	if v := nodeView(t, s, "n1"); v.ByClass["gpus"] != counts(2, 1) {
		t.Errorf("class gpus on n1: %+v, want the extended-resource claim's device allocated", v.ByClass["gpus"])
	}
	if _, ok := config.ExtendedResourceClass("example.com/fpga"); ok {
		t.Error("a resource no class serves is not DRA's")
	}
	if d := s.Dump().(devicestore.Dump); d.ExtendedResources["example.com/gpu"] != "gpus" {
		t.Errorf("dump extended resources %v, want example.com/gpu served by gpus", d.ExtendedResources)
	}
	s.DeleteDeviceClass(gpus)
	if _, ok := config.ExtendedResourceClass("example.com/gpu"); ok {
		t.Error("class deleted: example.com/gpu is still DRA's")
	}
}

// podWithExtendedClaim is a pod bound to node whose extended resources kube-scheduler
// served with claim (pod.status.extendedResourceClaimStatus).
func podWithExtendedClaim(ns, name, node, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ExtendedResourceClaimStatus: &corev1.PodExtendedResourceClaimStatus{
			ResourceClaimName: claim,
			RequestMappings:   []corev1.ContainerExtendedResourceRequest{{ContainerName: "main", ResourceName: "example.com/gpu", RequestName: "container-0-request-0"}},
		}},
	}
}

func TestDevices_APodsExtendedResourceClaimThatHoldsNoDeviceIsReported(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	missing := podWithExtendedClaim("ns", "missing", "n1", "missing-extended-resources-abcde")
	pending := podWithExtendedClaim("ns", "pending", "n1", "pending-extended-resources-abcde")
	held := podWithExtendedClaim("ns", "held", "n1", "held-extended-resources-abcde")
	s.AddResourceClaim(makeClaim("ns", "pending-extended-resources-abcde")) // not allocated
	s.AddResourceClaim(makeClaim("ns", "held-extended-resources-abcde", result{gpu, "n1", "gpu0", "", false}))
	for _, p := range []*corev1.Pod{missing, pending, held} {
		s.AddPod(p)
	}
	errs := s.CheckInvariants()
	if len(errs) != 2 {
		t.Fatalf("violations %v; want the two pods whose claim holds no device", errs)
	}
	for i, want := range []string{"ns/missing-extended-resources-abcde", "ns/pending-extended-resources-abcde"} {
		if msg := errs[i].Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "does not exist or is not allocated") {
			t.Errorf("violation %q does not name the claim %s and what is wrong", msg, want)
		}
	}
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(2, 1) {
		t.Errorf("node n1 %+v: want the allocated claim's device only (nothing negative)", v.DeviceCounts)
	}

	// The claim allocated, the pod gone or finished: nothing to report.
	s.UpdateResourceClaim(makeClaim("ns", "pending-extended-resources-abcde"),
		makeClaim("ns", "pending-extended-resources-abcde", result{gpu, "n1", "gpu1", "", false}))
	s.DeletePod(missing)
	finished := held.DeepCopy()
	finished.Status.Phase = corev1.PodSucceeded
	s.UpdatePod(held, finished)
	noViolations(t, s)
	// A pod the scheduler has not bound yet is not checked.
	s.AddPod(podWithExtendedClaim("ns", "unbound", "", "unbound-extended-resources-abcde"))
	noViolations(t, s)
}
