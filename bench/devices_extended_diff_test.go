package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Sizes of the extended-resource differential: events of each run, nodes, runs.
const (
	extSeed   = 20261126
	extRuns   = 20
	extEvents = 1500
	extNodes  = 12
)

// extNames are the extended resources the pods ask for: three a class may name, and the
// implicit names of two classes that exist and of one that does not.
var extNames = []corev1.ResourceName{"example.com/gpu", "example.com/fpga", "example.com/nic",
	"deviceclass.resource.kubernetes.io/c0", "deviceclass.resource.kubernetes.io/c1", "deviceclass.resource.kubernetes.io/c9"}

// TestDifferential_ExtendedResourcesServedByDRAMatchKubeScheduler feeds random pods asking
// for extended resources, nodes listing some of them in their allocatable (a device
// plugin's), and DeviceClasses naming some (spec.extendedResourceName), in random order
// with churn (classes renamed, added and deleted; nodes gaining and losing a resource; pods
// leaving), to multicache's handler and to kube-scheduler v1.37.1's own code: its
// framework.NodeInfo (AddPod, RemovePod, SetNode) and its NodeResourcesFit filter
// (noderesources.Fits) with a DRA manager whose DeviceClassResolver is fed the same class
// events. At checkpoints, for every node: what multicache charges to the node's
// allocatable plus what it charges to DRA (DRARequested) equals kube-scheduler's
// NodeInfo.Requested, and a resource is DRA's in multicache exactly when kube-scheduler's
// filter does not check it against the node's allocatable (it delegates it to DRA).
func TestDifferential_ExtendedResourcesServedByDRAMatchKubeScheduler(t *testing.T) {
	var checks, delegated, listed int
	for run := range extRuns {
		c, d, l := extendedRun(t, rand.New(rand.NewPCG(extSeed, uint64(run))), run)
		checks, delegated, listed = checks+c, delegated+d, listed+l
	}
	t.Logf("%d runs of %d events on %d nodes: %d node x resource decisions compared, %d DRA's, %d the node's allocatable's",
		extRuns, extEvents, extNodes, checks, delegated, listed)
	if delegated == 0 || listed == 0 {
		t.Error("the runs never reached both decisions: the generator is broken")
	}
}

// extWorld is both sides of one run.
type extWorld struct {
	t       *testing.T
	r       *rand.Rand
	h       *handler.Handler
	kube    map[string]*framework.NodeInfo
	classes *extendedresourcecache.ExtendedResourceCache
	manager *dynamicresources.DefaultDRAManager
	nodes   map[string]*corev1.Node
	pods    []*corev1.Pod
	class   map[string]*resourcev1.DeviceClass
	rv      int
}

func extendedRun(t *testing.T, r *rand.Rand, run int) (checks, delegated, listed int) {
	t.Helper()
	h := NewMulticache(nil, stores.NodeStoreName, stores.DeviceStoreName, stores.PodStoreName)
	ctx := klog.NewContext(context.Background(), klog.Background())
	manager := dynamicresources.NewDRAManager(ctx, assumecache.NewAssumeCache(klog.Background(), nil, "ResourceClaim", "", nil), nil,
		informers.NewSharedInformerFactory(fake.NewClientset(), 0))
	classes, ok := manager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
	if !ok || classes == nil {
		t.Fatalf("kube-scheduler's DRA manager has no extended resource cache (%T): is DRAExtendedResource on?", manager.DeviceClassResolver())
	}
	w := &extWorld{t: t, r: r, h: h, kube: map[string]*framework.NodeInfo{}, classes: classes, manager: manager,
		nodes: map[string]*corev1.Node{}, class: map[string]*resourcev1.DeviceClass{}}
	for i := range extNodes {
		n := w.node(fmt.Sprintf("r%d-n%d", run, i))
		w.nodes[n.Name] = n
		must(t, h.Add(n))
		w.kube[n.Name] = framework.NewNodeInfo()
		w.kube[n.Name].SetNode(n)
	}
	for i := range extEvents {
		switch x := r.IntN(100); {
		case x < 55:
			w.addPod(fmt.Sprintf("r%d-p%d", run, i))
		case x < 70 && len(w.pods) > 0:
			w.deletePod()
		case x < 85:
			w.changeClass()
		default:
			w.changeNode()
		}
		if i%100 == 99 || i == extEvents-1 {
			c, d, l := w.compare(fmt.Sprintf("run %d, after event %d", run, i))
			checks, delegated, listed = checks+c, delegated+d, listed+l
		}
	}
	for _, err := range h.CheckInvariants() {
		if !strings.Contains(err.Error(), "does not exist or is not allocated") { // the run makes no claims
			t.Errorf("run %d: multicache invariant: %v", run, err)
		}
	}
	return checks, delegated, listed
}

func (w *extWorld) nextRV() string {
	w.rv++
	return fmt.Sprint(w.rv)
}

// node lists each of the three named resources with chance 1/2, at 0 now and then.
func (w *extWorld) node(name string) *corev1.Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("10000")}
	for _, name := range extNames[:3] {
		switch x := w.r.IntN(10); {
		case x < 5:
		case x < 6:
			alloc[name] = resource.MustParse("0")
		default:
			alloc[name] = *resource.NewQuantity(int64(1+w.r.IntN(8)), resource.DecimalSI)
		}
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: w.nextRV()},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
}

func (w *extWorld) addPod(name string) {
	nodes := make([]string, 0, len(w.nodes))
	for n := range w.nodes {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	containers := []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}
	if w.r.IntN(3) == 0 {
		containers = append(containers, corev1.Container{Name: "side"})
	}
	for i := range containers {
		for _, res := range extNames {
			if w.r.IntN(4) == 0 {
				if containers[i].Resources.Requests == nil {
					containers[i].Resources.Requests = corev1.ResourceList{}
				}
				q := *resource.NewQuantity(int64(1+w.r.IntN(3)), resource.DecimalSI)
				containers[i].Resources.Requests[res] = q
			}
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: w.nextRV()},
		Spec: corev1.PodSpec{NodeName: nodes[w.r.IntN(len(nodes))], Containers: containers}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	// kube-scheduler records the claim it made for the pod's extended resources (which this
	// run does not create: the claims' side is the devices differentials').
	pod.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: name + "-extended-resources-abcde"}
	must(w.t, w.h.Add(pod))
	w.kube[pod.Spec.NodeName].AddPod(pod.DeepCopy())
	w.pods = append(w.pods, pod)
}

func (w *extWorld) deletePod() {
	i := w.r.IntN(len(w.pods))
	pod := w.pods[i]
	w.pods = slices.Delete(w.pods, i, i+1)
	must(w.t, w.h.Delete(pod))
	if err := w.kube[pod.Spec.NodeName].RemovePod(klog.Background(), pod); err != nil {
		w.t.Fatal(err)
	}
}

// changeClass adds one of classes c0..c3, renames its resource, or deletes it.
func (w *extWorld) changeClass() {
	name := fmt.Sprintf("c%d", w.r.IntN(4))
	var extended *string
	if x := w.r.IntN(4); x < 3 {
		extended = ptr.To(string(extNames[x]))
	}
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: w.nextRV()},
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: extended}}
	old, exists := w.class[name]
	switch {
	case !exists:
		must(w.t, w.h.Add(dc))
		w.classes.OnAdd(dc, false)
		w.class[name] = dc
	case w.r.IntN(3) == 0:
		must(w.t, w.h.Delete(old))
		w.classes.OnDelete(old)
		delete(w.class, name)
	default:
		must(w.t, w.h.Update(old, dc))
		w.classes.OnUpdate(old, dc)
		w.class[name] = dc
	}
}

// changeNode gives a node a new allocatable for the named resources.
func (w *extWorld) changeNode() {
	names := make([]string, 0, len(w.nodes))
	for n := range w.nodes {
		names = append(names, n)
	}
	slices.Sort(names)
	old := w.nodes[names[w.r.IntN(len(names))]]
	n := w.node(old.Name)
	must(w.t, w.h.Update(old, n))
	w.kube[n.Name].SetNode(n)
	w.nodes[n.Name] = n
}

// compare checks every node; it returns the decisions compared and how many were DRA's
// and the node's.
func (w *extWorld) compare(when string) (checks, delegated, listed int) {
	w.t.Helper()
	opts := noderesources.ResourceRequestsOptions{EnableDRAExtendedResource: true, EnablePodLevelResources: true}
	for name, kube := range w.kube {
		info, ok := w.h.NodeInfo(name)
		if !ok {
			w.t.Fatalf("%s: multicache lost node %s", when, name)
		}
		var diffs []string
		// Charged in all: the node's part plus DRA's is kube-scheduler's Requested.
		total := info.Requested.Clone()
		total.Add(info.DRARequested)
		diffs = append(diffs, compareResources(total, kube.Requested, int64(len(kube.Pods)))...)

		// The decision: a probe asking for more than any node has of every requested
		// resource fits kube-scheduler's filter on that resource exactly when the filter
		// leaves it to DRA.
		probe := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}}}}
		for res := range kube.Requested.ScalarResources {
			probe.Spec.Containers[0].Resources.Requests[res] = resource.MustParse("1000000")
		}
		insufficient := map[corev1.ResourceName]bool{}
		for _, in := range noderesources.Fits(probe, kube, w.manager, opts) {
			insufficient[in.ResourceName] = true
		}
		for res, v := range kube.Requested.ScalarResources {
			if v == 0 {
				continue
			}
			checks++
			kubeDRA := !insufficient[res]
			mcDRA := info.DRARequested.Scalar[res] > 0
			if kubeDRA {
				delegated++
			} else {
				listed++
			}
			if kubeDRA != mcDRA || (mcDRA && info.Requested.Scalar[res] != 0) {
				var mcClass string
				w.h.ReadStore(stores.DeviceStoreName, func(s store.Store) { mcClass, _ = s.(*devicestore.Store).ExtendedResourceClass(res) })
				kc := w.classes.GetDeviceClass(res)
				diffs = append(diffs, fmt.Sprintf("%s: kube-scheduler leaves it to DRA: %v (class %v); multicache charges %d to allocatable, %d to DRA (class %q)",
					res, kubeDRA, kc != nil, info.Requested.Scalar[res], info.DRARequested.Scalar[res], mcClass))
			}
		}
		if len(diffs) > 0 {
			w.t.Errorf("%s, node %s (allocatable %v, classes %v): %s", when, name, w.nodes[name].Status.Allocatable, w.classNames(), strings.Join(diffs, "; "))
		}
	}
	return checks, delegated, listed
}

func (w *extWorld) classNames() []string {
	var out []string
	for name, c := range w.class {
		out = append(out, fmt.Sprintf("%s=%s", name, ptr.Deref(c.Spec.ExtendedResourceName, "")))
	}
	slices.Sort(out)
	return out
}
