package nodestore_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

const gpu corev1.ResourceName = "example.com/gpu"

// newStoresWithDevices builds a NodeStore and a DeviceStore on one CacheHandler, as the
// handler does: the DeviceStore tells the NodeStore which extended resources DRA serves.
func newStoresWithDevices(t *testing.T) (*nodestore.Store, *devicestore.Store) {
	t.Helper()
	s := newStore(t)
	return s, devicestore.New(config)
}

func gpuClass(name string, extended corev1.ResourceName) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
	if extended != "" {
		c.Spec.ExtendedResourceName = ptr.To(string(extended))
	}
	return c
}

// withGPUs adds n of an extended resource to a pod's first container's requests.
func withGPUs(name corev1.ResourceName, n int64) ts.PodOption {
	return func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
}

// withClaim records the claim kube-scheduler made for a pod's extended resources
// (pod.status.extendedResourceClaimStatus).
func withClaim(p *corev1.Pod) {
	p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: p.Name + "-extended-resources-abcde",
		RequestMappings: []corev1.ContainerExtendedResourceRequest{{ContainerName: "main", ResourceName: string(gpu), RequestName: "container-0-request-0"}}}
}

func nodeWith(name string, extended ...any) *corev1.Node {
	n := ts.MakeNode(name, "8", "32Gi")
	for i := 0; i+1 < len(extended); i += 2 {
		n.Status.Allocatable[extended[i].(corev1.ResourceName)] = *resource.NewQuantity(extended[i+1].(int64), resource.DecimalSI)
	}
	return n
}

// split is what a node charges to its allocatable and to DRA of a resource.
func split(t *testing.T, s *nodestore.Store, node string, name corev1.ResourceName) (requested, bestEffort, dra int64) {
	t.Helper()
	info, ok := s.Get(node)
	if !ok {
		t.Fatalf("node %s unknown", node)
	}
	return info.Requested.Scalar[name], info.BestEffortRequested.Scalar[name], info.DRARequested.Scalar[name]
}

func TestNodes_AnExtendedResourceAClassServesIsChargedToDevicesWhereTheNodeListsNone(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("dra"))
	s.AddNode(nodeWith("plugin", gpu, int64(4)))
	devices.AddDeviceClass(gpuClass("gpus", gpu))

	onDRA := ts.MakePod("ns", "a", ts.OnNode("dra"), ts.Requests("1", "1Gi"), withGPUs(gpu, 2), withClaim)
	onPlugin := ts.MakePod("ns", "b", ts.OnNode("plugin"), ts.Requests("1", "1Gi"), withGPUs(gpu, 3))
	s.AddPod(onDRA)
	s.AddPod(onPlugin)

	if req, _, dra := split(t, s, "dra", gpu); req != 0 || dra != 2 {
		t.Errorf("node without %s: requested %d, DRA %d; want 0 and 2 (the class's devices serve it)", gpu, req, dra)
	}
	info, _ := s.Get("dra")
	if info.Requested.MilliCPU != 1000 {
		t.Errorf("node without %s: cpu requested %dm, want 1000m (only the extended resource is DRA's)", gpu, info.Requested.MilliCPU)
	}
	if free := info.Free(); free.Scalar[gpu] < 0 {
		t.Errorf("node without %s reports %d free: over-committed by a request DRA serves", gpu, free.Scalar[gpu])
	}
	if req, _, dra := split(t, s, "plugin", gpu); req != 3 || dra != 0 {
		t.Errorf("node listing %s: requested %d, DRA %d; want 3 and 0 (its device plugin serves it, though a class names it)", gpu, req, dra)
	}
	if d := nodestore.DumpNode(info); d.DRARequested.Name(gpu, resource.DecimalSI).Value() != 2 || d.Requested.Name(gpu, resource.DecimalSI).Value() != 0 {
		t.Errorf("dump: requested %v, draRequested %v; want the GPUs under draRequested only", d.Requested, d.DRARequested)
	}
	checkInvariants(t, s)

	s.DeletePod(onDRA)
	s.DeletePod(onPlugin)
	for _, n := range []string{"dra", "plugin"} {
		info, _ := s.Get(n)
		if !info.Requested.Equal(store.Resources{}) || !info.DRARequested.Equal(store.Resources{}) {
			t.Errorf("node %s after the pods left: requested %v, DRA %v; want nothing", n, info.Requested.ResourceList(), info.DRARequested.ResourceList())
		}
	}
	checkInvariants(t, s)
}

// The decision follows the classes and the node's allocatable, whichever changes first.
func TestNodes_TheDRAChargeFollowsClassesAndTheNodesAllocatable(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("n"))
	guaranteed := ts.MakePod("ns", "g", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs(gpu, 2), withClaim)
	bestEffort := ts.MakePod("ns", "be", ts.OnNode("n"), ts.BestEffort(), withGPUs(gpu, 1), withClaim)
	implicit := ts.MakePod("ns", "i", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs("deviceclass.resource.kubernetes.io/gpus", 1), withClaim)
	s.AddPod(guaranteed)
	s.AddPod(bestEffort)
	s.AddPod(implicit)
	steps := []struct {
		what                    string
		do                      func()
		requested, beReq, dra   int64
		implicitReq, implicitDR int64
	}{
		{"no class yet: a device plugin's resource the node lacks", func() {}, 2, 1, 0, 1, 0},
		{"class gpus names it", func() { devices.AddDeviceClass(gpuClass("gpus", gpu)) }, 0, 0, 3, 0, 1},
		{"the node lists it (device plugin)", func() { s.UpdateNode(nil, nodeWith("n", gpu, int64(8))) }, 2, 1, 0, 0, 1},
		{"the node lists none of it again", func() { s.UpdateNode(nil, nodeWith("n")) }, 0, 0, 3, 0, 1},
		{"the node lists it at 0", func() { s.UpdateNode(nil, nodeWith("n", gpu, int64(0))) }, 0, 0, 3, 0, 1},
		{"the class renames its resource", func() {
			devices.UpdateDeviceClass(gpuClass("gpus", gpu), gpuClass("gpus", "example.com/other"))
		}, 2, 1, 0, 0, 1},
		{"the class names it again", func() {
			devices.UpdateDeviceClass(gpuClass("gpus", "example.com/other"), gpuClass("gpus", gpu))
		}, 0, 0, 3, 0, 1},
		{"the class is deleted", func() { devices.DeleteDeviceClass(gpuClass("gpus", gpu)) }, 2, 1, 0, 1, 0},
	}
	for _, st := range steps {
		st.do()
		req, beReq, dra := split(t, s, "n", gpu)
		ireq, _, idra := split(t, s, "n", "deviceclass.resource.kubernetes.io/gpus")
		if req != st.requested || beReq != st.beReq || dra != st.dra || ireq != st.implicitReq || idra != st.implicitDR {
			t.Errorf("%s: %s requested %d, best-effort %d, DRA %d; implicit name requested %d, DRA %d; want %d, %d, %d; %d, %d",
				st.what, gpu, req, beReq, dra, ireq, idra, st.requested, st.beReq, st.dra, st.implicitReq, st.implicitDR)
		}
		checkInvariants(t, s)
	}
	devices.AddDeviceClass(gpuClass("gpus", gpu))
	for _, p := range []*corev1.Pod{guaranteed, bestEffort, implicit} {
		s.DeletePod(p)
	}
	info, _ := s.Get("n")
	for _, r := range []store.Resources{info.Requested, info.BestEffortRequested, info.Reserved, info.DRARequested} {
		if !r.Equal(store.Resources{}) {
			t.Errorf("after every pod left: %v left charged (negative or stale)", r.ResourceList())
		}
	}
	checkInvariants(t, s)
}

// A class naming a resource the node lists: the node's device plugin serves it there, DRA
// elsewhere; nothing is counted twice or below zero.
func TestNodes_AClassNamingAResourceTheNodeListsLeavesItToTheDevicePlugin(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("n", gpu, int64(1)))
	devices.AddDeviceClass(gpuClass("gpus", gpu))
	pod := ts.MakePod("ns", "p", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs(gpu, 2))
	s.AddPod(pod)
	info, _ := s.Get("n")
	if free := info.Free(); free.Scalar[gpu] != -1 || info.DRARequested.Scalar[gpu] != 0 {
		t.Errorf("free %d, DRA %d; want -1 (over-committed: the node's device plugin has 1) and 0", free.Scalar[gpu], info.DRARequested.Scalar[gpu])
	}
	checkInvariants(t, s)
	s.DeletePod(pod)
	if req, _, dra := split(t, s, "n", gpu); req != 0 || dra != 0 {
		t.Errorf("after the pod left: requested %d, DRA %d", req, dra)
	}
}

// A placeholder holding a DRA-served resource keeps Reserved a part of Requested.
func TestNodes_APlaceholdersDRAServedResourceIsNotReserved(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("n"))
	devices.AddDeviceClass(gpuClass("gpus", gpu))
	r := ts.MakeReservation("ns", "r", "n", "1", "1Gi")
	r.Spec.Resources[gpu] = resource.MustParse("1")
	ph := store.NewPlaceholderPod(r, "n")
	s.AddPod(ph)
	info, _ := s.Get("n")
	if info.Reserved.Scalar[gpu] != 0 || info.DRARequested.Scalar[gpu] != 1 || info.Reserved.MilliCPU != 1000 {
		t.Errorf("reserved %v, DRA %v; want 1 cpu reserved and the GPU DRA's", info.Reserved.ResourceList(), info.DRARequested.ResourceList())
	}
	checkInvariants(t, s)
	s.DeletePod(ph)
	if _, ok := s.Get("n"); ok {
		info, _ = s.Get("n")
		if !info.DRARequested.Equal(store.Resources{}) || !info.Reserved.Equal(store.Resources{}) {
			t.Errorf("after the placeholder left: reserved %v, DRA %v", info.Reserved.ResourceList(), info.DRARequested.ResourceList())
		}
	}
}

// Two classes naming one resource: kube-scheduler's map keeps one, and which depends on
// the order of events; an update that keeps a class's name can give it the resource.
func TestNodes_AClassUpdateThatKeepsItsResourceNameMayStillChangeWhatDRAServes(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("n"))
	devices.AddDeviceClass(gpuClass("a", gpu))
	devices.AddDeviceClass(gpuClass("b", gpu)) // loses gpu to "a" (the lower name)
	s.AddPod(ts.MakePod("ns", "p", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs(gpu, 1), withClaim))
	// "a" moves to another resource: the library drops gpu, though "b" names it.
	devices.UpdateDeviceClass(gpuClass("a", gpu), gpuClass("a", "example.com/other"))
	if _, ok := devices.ExtendedResourceClass(gpu); ok {
		t.Fatal("the library kept a class for the resource: this test's premise changed")
	}
	if req, _, dra := split(t, s, "n", gpu); req != 1 || dra != 0 {
		t.Errorf("no class serves %s: requested %d, DRA %d; want 1 and 0", gpu, req, dra)
	}
	// "b" updated with the same extendedResourceName takes gpu.
	devices.UpdateDeviceClass(gpuClass("b", gpu), gpuClass("b", gpu))
	if class, ok := devices.ExtendedResourceClass(gpu); !ok || class != "b" {
		t.Fatalf("the library gives %s to %q, %v; want b", gpu, class, ok)
	}
	if req, _, dra := split(t, s, "n", gpu); req != 0 || dra != 1 {
		t.Errorf("class b serves %s after its update: requested %d, DRA %d; want 0 and 1", gpu, req, dra)
	}
	checkInvariants(t, s)
}

// A pod bound where DRA serves its request, with no extended-resource claim recorded: bound
// by something that did not have DRA allocate it devices. Reported, unless it is assumed
// (its scheduler records the claim before it binds); charged to DRA all the same.
func TestNodes_APodDRAServesWithoutAnExtendedResourceClaimIsReported(t *testing.T) {
	s, devices := newStoresWithDevices(t)
	s.AddNode(nodeWith("n"))
	devices.AddDeviceClass(gpuClass("gpus", gpu))
	s.AddPod(ts.MakePod("ns", "recorded", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs(gpu, 1), withClaim))
	s.AddPod(ts.MakePod("ns", "cpu-only", ts.OnNode("n"), ts.Requests("1", "1Gi")))
	bare := ts.MakePod("ns", "bare", ts.OnNode("n"), ts.Requests("1", "1Gi"), withGPUs(gpu, 1))
	s.AddPod(bare)
	errs := s.CheckInvariants()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "pod ns/bare asks for example.com/gpu") ||
		!strings.Contains(errs[0].Error(), "no extended-resource claim") {
		t.Errorf("violations %v; want one, for ns/bare, naming the resource and the missing claim", errs)
	}
	if req, _, dra := split(t, s, "n", gpu); req != 0 || dra != 2 {
		t.Errorf("requested %d, DRA %d; want 0 and 2", req, dra)
	}
	config.SetPodHandler(func(key types.NamespacedName) (store.PodStatus, bool) {
		return store.PodStatus{State: store.PodAssumed}, key.Name == "bare"
	})
	checkInvariants(t, s)
}
