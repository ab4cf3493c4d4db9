package plugin

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func cpuPod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// TestShortOf_HeldRoomCountsAsUsedForThePodsThatMayNotConsumeIt: on a 4-CPU node running 1
// CPU with 2 CPUs held, a 1-CPU pod fits and a 2-CPU pod does not; a pod that asks for
// none of what is held fits whatever is held.
func TestShortOf_HeldRoomCountsAsUsedForThePodsThatMayNotConsumeIt(t *testing.T) {
	ni := framework.NewNodeInfo(cpuPod("running", "1"))
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: room, Capacity: room}})
	held := store.Resources{MilliCPU: 2000, Pods: 1}
	acct := store.Accounting{}
	if short := shortOf(ni, acct.PodRequests(cpuPod("small", "1")), held); short != "" {
		t.Errorf("a 1-CPU pod beside 1 used and 2 held of 4 is short of %s", short)
	}
	if short := shortOf(ni, acct.PodRequests(cpuPod("big", "2")), held); !strings.HasPrefix(short, "cpu:") {
		t.Errorf("a 2-CPU pod beside 1 used and 2 held of 4: short %q, want cpu", short)
	}
	if short := shortOf(ni, store.Resources{Memory: 1 << 20}, store.Resources{MilliCPU: 4000}); short != "" {
		t.Errorf("a pod asking no CPU is short of %s where only CPU is held", short)
	}
}
