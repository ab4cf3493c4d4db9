package testsupport

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The sizes of `make bench-e2e SIZE=large`.
const LargeNodes, LargePods = 5000, 150000

// LargeCluster returns bench-e2e SIZE=large's nodes and pods, shaped as the informers hand
// them over: ReplicaSets of 10 pods with labels and a controller owner reference, a main
// container of five CPU and three memory sizes, one pod in three with a sidecar, requests ==
// limits, every resource list shared between the pods that list the same quantities (as the
// operator's podTransform makes them), bound round-robin and running, versions from 1.
func LargeCluster() (nodes []*corev1.Node, pods []*corev1.Pod) {
	const perRS = 10
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi")}
	for i := range LargeNodes {
		name := fmt.Sprintf("node-%05d", i)
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
			Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		})
	}
	shared := map[string]corev1.ResourceList{}
	container := func(name, cpu, memory string) corev1.Container {
		id := cpu + "/" + memory
		rl, ok := shared[id]
		if !ok {
			rl = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
			shared[id] = rl
		}
		return corev1.Container{Name: name, Image: "registry.example/" + name + ":1", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
	}
	for i := range LargePods {
		r, slot := i/perRS, i%perRS
		rs, name := fmt.Sprintf("rs-%06d", r), fmt.Sprintf("rs-%06d-%d", r, slot)
		containers := []corev1.Container{container("main", fmt.Sprintf("%dm", 100+100*(slot%5)), fmt.Sprintf("%dMi", 128<<(slot%3)))}
		if slot%3 == 0 {
			containers = append(containers, container("sidecar", "50m", "64Mi"))
		}
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprintf("bench-%02d", i/3000), Name: name, UID: types.UID("uid-" + name), ResourceVersion: fmt.Sprint(i + 1),
				Labels: map[string]string{"app": rs, "pod-template-hash": fmt.Sprintf("h%06d", r)},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("uid-" + rs), Controller: ptr.To(true),
				}},
			},
			Spec:   corev1.PodSpec{NodeName: nodes[i%LargeNodes].Name, Containers: containers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return nodes, pods
}
