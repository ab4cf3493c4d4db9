package plugin

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestFirstUnknown_NamesTheCachedPodTheSchedulerNoLongerHas: whether a node holds a few
// pods (compared pairwise) or many (through a map), the cached pod the scheduler's node
// info lacks is found, unless a preemption what-if removed it.
func TestFirstUnknown_NamesTheCachedPodTheSchedulerNoLongerHas(t *testing.T) {
	for _, n := range []int{3, 40} {
		t.Run(fmt.Sprintf("%d pods", n), func(t *testing.T) {
			var cached []*corev1.Pod
			var infos []fwk.PodInfo
			for i := range n {
				pod := cpuPod(fmt.Sprintf("p%d", i), "1")
				cached = append(cached, pod)
				if i != n/2 {
					pi, err := framework.NewPodInfo(pod)
					if err != nil {
						t.Fatal(err)
					}
					infos = append(infos, pi)
				}
			}
			if got := firstUnknown(cached, infos, nil); got != cached[n/2] {
				t.Errorf("firstUnknown = %v, want %s", got, cached[n/2].Name)
			}
			if got := firstUnknown(cached, infos, map[types.UID]bool{cached[n/2].UID: true}); got != nil {
				t.Errorf("firstUnknown = %s, want none: the what-if removed it", got.Name)
			}
			if got := firstUnknown(cached[:n/2], infos, nil); got != nil {
				t.Errorf("firstUnknown = %s, want none: the scheduler has every cached pod", got.Name)
			}
		})
	}
}
