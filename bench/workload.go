package bench

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The size of the workload every cache is measured on.
const (
	// NumNodes is the number of nodes.
	NumNodes = 5000
	// PodsPerNode is the number of pods bound to each node.
	PodsPerNode = 30
	// NumPods is the number of pods.
	NumPods = NumNodes * PodsPerNode
)

// Workload is the cluster every cache is loaded with: nodes and bound pods, built once and
// shared (read-only) by every cache of the process, so that the caches hold the very same
// pod pointers and no benchmark times the building of an object.
//
// Pod i is bound to node i % NumNodes, in slot i / NumNodes of that node, so that the pods
// of one slot, Pods[slot*NumNodes : (slot+1)*NumNodes], are one pod on every node. Every pod
// has two versions that differ only as a status update does (resourceVersion and the Ready
// condition): UpdatePod flips a pod from one version to the other.
type Workload struct {
	// Nodes are the nodes, in order.
	Nodes []*corev1.Node
	// Versions holds the two versions of every pod; Versions[0] is what caches load.
	Versions [2][]*corev1.Pod
}

var (
	workloadOnce sync.Once
	workload     *Workload
)

// SharedWorkload returns the process's workload, building it on first use.
func SharedWorkload() *Workload {
	workloadOnce.Do(func() { workload = NewWorkload(NumNodes, PodsPerNode) })
	return workload
}

// NewWorkload builds nodes nodes and perNode bound pods on each.
func NewWorkload(nodes, perNode int) *Workload {
	w := &Workload{Nodes: make([]*corev1.Node, nodes)}
	for i := range w.Nodes {
		w.Nodes[i] = MakeNode(i)
	}
	n := nodes * perNode
	w.Versions[0] = make([]*corev1.Pod, n)
	w.Versions[1] = make([]*corev1.Pod, n)
	for i := 0; i < n; i++ {
		p := makePod(i, w.Nodes[i%nodes].Name)
		w.Versions[0][i] = p
		w.Versions[1][i] = statusUpdate(p)
	}
	return w
}

// NumPods returns the number of pods of the workload.
func (w *Workload) NumPods() int { return len(w.Versions[0]) }

// Slot returns the indexes of the pods of one slot: one pod on every node.
func (w *Workload) Slot(slot int) []int {
	n := len(w.Nodes)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = slot*n + i
	}
	return idx
}

// MakeNode returns node i: 64 cores, 256Gi, 110 pods, labelled with its hostname, one of
// three zones and an instance type, Ready.
func MakeNode(i int) *corev1.Node {
	name := fmt.Sprintf("node-%05d", i)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			UID:  types.UID("uid-" + name),
			Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelTopologyZone:       fmt.Sprintf("zone-%d", i%3),
				corev1.LabelInstanceTypeStable: "m5.16xlarge",
			},
			ResourceVersion: "1",
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// landed is when every pod of the workload was scheduled.
var landed = metav1.Date(2026, 1, 1, 0, 0, 0, 0, metav1.Now().Location())

// makePod returns pod i, bound to node: a ReplicaSet's pod with one container requesting
// between 250m and 1 cpu and between 512Mi and 2Gi, running.
func makePod(i int, node string) *corev1.Pod {
	app := fmt.Sprintf("app-%04d", i%1000)
	name := fmt.Sprintf("%s-%07d", app, i)
	cpu := resource.NewMilliQuantity(int64(250*(1+i%4)), resource.DecimalSI)
	mem := resource.NewQuantity(int64(512<<20)*int64(1+i%4), resource.BinarySI)
	requests := corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         fmt.Sprintf("ns-%02d", i%50),
			Name:              name,
			UID:               types.UID(fmt.Sprintf("uid-pod-%07d", i)),
			ResourceVersion:   "1",
			CreationTimestamp: landed,
			Labels:            map[string]string{"app": app, "pod-template-hash": "7d4b9c8f6"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-7d4b9c8f6",
				UID: types.UID("uid-rs-" + app), Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:      node,
			SchedulerName: corev1.DefaultSchedulerName,
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.example/" + app + ":1.0",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests},
			}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: landed},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: landed},
			},
		},
	}
}

// statusUpdate returns the next version of a pod as a status update makes it: a new
// resourceVersion and the Ready condition flipped. Spec and labels are shared with p (no
// cache modifies a pod).
func statusUpdate(p *corev1.Pod) *corev1.Pod {
	next := *p
	next.ResourceVersion = "2"
	next.Status.Conditions = []corev1.PodCondition{
		p.Status.Conditions[0],
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: landed},
	}
	return &next
}
