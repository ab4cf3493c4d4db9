package stores_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func container(cpu, memory string) corev1.Container {
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}}
}

func TestPodRequests_FollowsContainersInitSidecarsOverheadAndPodLevel(t *testing.T) {
	sidecar := container("200m", "100Mi")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	cases := []struct {
		name        string
		mutate      func(*corev1.Pod)
		wantMilli   int64
		wantMemMi   int64
		wantScalars map[corev1.ResourceName]int64
	}{
		{"two containers sum", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi"), container("500m", "512Mi")}
		}, 1500, 1536, nil},
		{"a big init container wins", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.InitContainers = []corev1.Container{container("2", "256Mi")}
		}, 2000, 1024, nil},
		{"sidecars add to containers and run beside later init containers", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.InitContainers = []corev1.Container{sidecar, container("1", "2Gi")}
		}, 1200, 2148, nil},
		{"overhead is added", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		}, 1100, 1024, nil},
		{"pod-level resources replace containers", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}
		}, 3000, 0, nil},
		{"extended resources are scalars", func(p *corev1.Pod) {
			c := container("1", "1Gi")
			c.Resources.Requests["example.com/gpu"] = resource.MustParse("2")
			p.Spec.Containers = []corev1.Container{c}
		}, 1000, 1024, map[corev1.ResourceName]int64{"example.com/gpu": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := ts.MakePod("ns", "p")
			tc.mutate(pod)
			got := stores.PodRequests(pod)
			if got.MilliCPU != tc.wantMilli || got.Memory != tc.wantMemMi<<20 || got.Pods != 1 {
				t.Errorf("got cpu %dm memory %dMi pods %d, want %dm %dMi 1", got.MilliCPU, got.Memory>>20, got.Pods, tc.wantMilli, tc.wantMemMi)
			}
			if !got.Equal(stores.Resources{MilliCPU: got.MilliCPU, Memory: got.Memory, Pods: 1, Scalar: tc.wantScalars}) {
				t.Errorf("scalars %v, want %v", got.Scalar, tc.wantScalars)
			}
		})
	}
}

func TestResources_SubRemovesZeroScalarsSoEqualAmountsCompareEqual(t *testing.T) {
	a := stores.Resources{MilliCPU: 5, Scalar: map[corev1.ResourceName]int64{"gpu": 1}}
	a.Sub(stores.Resources{Scalar: map[corev1.ResourceName]int64{"gpu": 1}})
	if a.Scalar != nil || !a.Equal(stores.Resources{MilliCPU: 5}) {
		t.Errorf("after subtracting the only scalar: %+v", a)
	}
	b := stores.Resources{MilliCPU: -3, Memory: 4, Scalar: map[corev1.ResourceName]int64{"gpu": -1}}
	b.FloorAtZero()
	if !b.Equal(stores.Resources{Memory: 4, Scalar: map[corev1.ResourceName]int64{"gpu": 0}}) {
		t.Errorf("floored: %+v", b)
	}
}
