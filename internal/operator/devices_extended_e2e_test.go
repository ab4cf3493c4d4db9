package operator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestDevices_AnExtendedResourceAClassServesIsChargedToItsDevices is the extended
// resource scenario through the real API server: a DeviceClass serving example.com/gpu, a
// node whose allocatable lists none of it with 2 devices of the class, a node whose device
// plugin lists 4. A pod on the first asking for 1 GPU, served as kube-scheduler serves it
// (its claim created and allocated, then named in pod.status.extendedResourceClaimStatus),
// is charged to the class's devices (1 of 2 allocated) and to DRARequested, not to the
// node's allocatable: the node has no negative free amount. A pod on the second is charged
// to its allocatable as before. A pod whose status names a claim that does not exist is
// reported by the self-check, with nothing negative.
func TestDevices_AnExtendedResourceAClassServesIsChargedToItsDevices(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	const driver, gpu = "ext.example.com", corev1.ResourceName("example.com/gpu")
	draNode, pluginNode, class := "ext-dra-"+ns, "ext-plugin-"+ns, "ext-gpus-"+ns
	allocatable := func(extra ...string) corev1.ResourceList {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
		for i := 0; i+1 < len(extra); i += 2 {
			l[corev1.ResourceName(extra[i])] = resource.MustParse(extra[i+1])
		}
		return l
	}
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: draNode}, Status: corev1.NodeStatus{Allocatable: allocatable(), Capacity: allocatable()}},
		{ObjectMeta: metav1.ObjectMeta{Name: pluginNode}, Status: corev1.NodeStatus{Allocatable: allocatable(string(gpu), "4"), Capacity: allocatable(string(gpu), "4")}},
	}
	for _, n := range nodes {
		create(t, n)
	}
	create(t,
		&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: resourcev1.DeviceClassSpec{
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)}}},
			ExtendedResourceName: ptr.To(string(gpu)),
		}},
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: draNode + "-gpus"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To(draNode), Pool: resourcev1.ResourcePool{Name: draNode, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu0"}, {Name: "gpu1"}},
		}})
	t.Cleanup(func() {
		for _, o := range []client.Object{nodes[0], nodes[1], &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: class}},
			&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: draNode + "-gpus"}}} {
			_ = env.Client.Delete(ctx(), o)
		}
	})
	gpuPod := func(name, node string, gpus string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), gpu: resource.MustParse(gpus)},
				Limits:   corev1.ResourceList{gpu: resource.MustParse(gpus)},
			}}},
		}}
	}
	served, plugin := gpuPod("served", draNode, "1"), gpuPod("plugin", pluginNode, "2")
	create(t, served, plugin)

	// What kube-scheduler's DRA plugin does for the pod on the DRA node: the claim for its
	// extended resource (owned by the pod), allocated one device, named in the pod's status.
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "served-extended-resources-x7k2q",
			Annotations: map[string]string{"resource.kubernetes.io/extended-resource-claim": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: served.Name, UID: served.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "container-0-request-0", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	create(t, claim)
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "container-0-request-0", Driver: driver, Pool: draNode, Device: "gpu0"},
	}}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: served.Name, UID: served.UID}}
	if err := env.Client.Status().Update(ctx(), claim); err != nil {
		t.Fatalf("allocating the extended-resource claim: %v", err)
	}
	recordClaim := func(pod *corev1.Pod, claimName string) {
		t.Helper()
		acctStatus(t, pod, func(p *corev1.Pod) {
			p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{
				ResourceClaimName: claimName,
				RequestMappings:   []corev1.ContainerExtendedResourceRequest{{ContainerName: "main", ResourceName: string(gpu), RequestName: "container-0-request-0"}},
			}
		})
	}
	recordClaim(served, claim.Name)

	nodeSplit := func(node string, requested, dra int64) func() (bool, string) {
		return func() (bool, string) {
			info, ok := op.Cache.NodeInfo(node)
			if !ok {
				return false, "node not in the cache"
			}
			var negative []string
			for name, v := range info.Free().Scalar {
				if v < 0 {
					negative = append(negative, fmt.Sprintf("%s %d", name, v))
				}
			}
			ok = info.Requested.Scalar[gpu] == requested && info.DRARequested.Scalar[gpu] == dra && len(negative) == 0
			return ok, fmt.Sprintf("requested %v, DRA-served %v, negative free %v", info.Requested.ResourceList(), info.DRARequested.ResourceList(), negative)
		}
	}
	classDevices := func(total, allocated int) func() (bool, string) {
		return func() (bool, string) {
			var v store.NodeDevices
			op.Cache.ReadStore(stores.DeviceStoreName, func(s store.Store) { v, _ = s.(*devicestore.Store).Node(draNode) })
			c := v.ByClass[class]
			return c.Total == total && c.Allocated == allocated, fmt.Sprintf("class %s on %s: %+v", class, draNode, c)
		}
	}
	eventually(t, "the DRA node charges the GPU to DRA, not to its allocatable", nodeSplit(draNode, 0, 1))
	eventually(t, "the class's devices hold the pod's claim", classDevices(2, 1))
	eventually(t, "the device plugin's node charges the GPUs to its allocatable", nodeSplit(pluginNode, 2, 0))
	// The node view a reader gets (/debug/cache/nodes/NAME): the GPU under draRequested,
	// not under requested, so requested fits the allocatable.
	srv := httptest.NewServer(op.Debug.Handler())
	defer srv.Close()
	eventually(t, "the debug node view shows the GPU as DRA's", func() (bool, string) {
		resp, err := http.Get(srv.URL + "/debug/cache/nodes/" + draNode)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var v struct {
			Allocatable  corev1.ResourceList `json:"allocatable"`
			Requested    corev1.ResourceList `json:"requested"`
			DRARequested corev1.ResourceList `json:"draRequested"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			return false, err.Error()
		}
		over := false
		for name, q := range v.Requested {
			if a, ok := v.Allocatable[name]; !ok || q.Cmp(a) > 0 {
				over = true
			}
		}
		dra := v.DRARequested[gpu]
		return !over && dra.Value() == 1, fmt.Sprintf("allocatable %v, requested %v, draRequested %v", v.Allocatable, v.Requested, v.DRARequested)
	})
	// Until the cache has the pod's status, the pod is bound without a claim: reported.
	eventually(t, "the self-check finds nothing", func() (bool, string) {
		errs := op.Cache.CheckInvariants()
		return len(errs) == 0, fmt.Sprint(errs)
	})

	// Bad input: a pod whose status names a claim that does not exist.
	ghost := gpuPod("ghost", draNode, "1")
	create(t, ghost)
	recordClaim(ghost, "ghost-extended-resources-00000")
	eventually(t, "the ghost pod's GPU is DRA's on the node too", nodeSplit(draNode, 0, 2))
	eventually(t, "the self-check reports the missing claim", func() (bool, string) {
		errs := op.Cache.CheckInvariants()
		return len(errs) == 1 && strings.Contains(errs[0].Error(), ns+"/ghost-extended-resources-00000"), fmt.Sprint(errs)
	})
	if ok, msg := classDevices(2, 1)(); !ok {
		t.Errorf("a claim that does not exist holds no device: %s", msg)
	}

	for _, p := range []*corev1.Pod{served, plugin, ghost} {
		if err := env.Client.Delete(ctx(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Delete(ctx(), claim); err != nil { // no garbage collector in the test control plane
		t.Fatal(err)
	}
	eventually(t, "nothing charged once the pods and the claim went", func() (bool, string) {
		ok1, m1 := nodeSplit(draNode, 0, 0)()
		ok2, m2 := nodeSplit(pluginNode, 0, 0)()
		ok3, m3 := classDevices(2, 0)()
		return ok1 && ok2 && ok3, strings.Join([]string{m1, m2, m3}, "; ")
	})
	if errs := op.Cache.CheckInvariants(); len(errs) > 0 {
		t.Errorf("self-check: %v", errs)
	}
}

// TestDevices_DRANodeAllocatableResourcesReachesTheNodeStore: the option (off by default, as
// kube-scheduler's gate) is the accounting the stores are built with.
func TestDevices_DRANodeAllocatableResourcesReachesTheNodeStore(t *testing.T) {
	if DefaultOptions().DRANodeAllocatableResources {
		t.Error("DRANodeAllocatableResources is on by default; kube-scheduler v1.37's gate is off")
	}
	op := startOperator(t, func(o *Options) { o.DRANodeAllocatableResources = true })
	if got := op.Cache.Config().Accounting(); !got.DRANodeAllocatableResources {
		t.Errorf("the cache's accounting %+v, want DRANodeAllocatableResources on", got)
	}
}
