package store_test

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func container(cpu, memory string) corev1.Container {
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}}
}

func TestPodRequests_FollowsContainersInitSidecarsOverheadAndPodLevel(t *testing.T) {
	sidecar := container("200m", "100Mi")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	const mi = int64(1) << 20
	cases := []struct {
		name        string
		mutate      func(*corev1.Pod)
		wantMilli   int64
		wantMem     int64 // bytes
		wantScalars map[corev1.ResourceName]int64
	}{
		{"two containers sum", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi"), container("500m", "512Mi")}
		}, 1500, 1536 * mi, nil},
		{"a big init container wins", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.InitContainers = []corev1.Container{container("2", "256Mi")}
		}, 2000, 1024 * mi, nil},
		{"sidecars add to containers and run beside later init containers", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.InitContainers = []corev1.Container{sidecar, container("1", "2Gi")}
		}, 1200, 2148 * mi, nil},
		{"overhead is added", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		}, 1100, 1024 * mi, nil},
		{"pod-level resources replace only the resources they name", func(p *corev1.Pod) {
			c := container("1", "1Gi")
			c.Resources.Requests["example.com/gpu"] = resource.MustParse("2")
			p.Spec.Containers = []corev1.Container{c}
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}
		}, 3000, 1024 * mi, map[corev1.ResourceName]int64{"example.com/gpu": 2}},
		{"pod-level resources, then overhead", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("2Gi"),
			}}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		}, 3100, 2048 * mi, nil},
		{"extended resources are scalars", func(p *corev1.Pod) {
			c := container("1", "1Gi")
			c.Resources.Requests["example.com/gpu"] = resource.MustParse("2")
			p.Spec.Containers = []corev1.Container{c}
		}, 1000, 1024 * mi, map[corev1.ResourceName]int64{"example.com/gpu": 2}},
		{"hugepages, prefixed native and attachable volumes are scalars; other names are ignored", func(p *corev1.Pod) {
			c := container("1", "1Gi")
			c.Resources.Requests["hugepages-2Mi"] = resource.MustParse("4Mi")
			c.Resources.Requests["kubernetes.io/foo"] = resource.MustParse("1")
			c.Resources.Requests["attachable-volumes-csi-x"] = resource.MustParse("1")
			c.Resources.Requests["foo"] = resource.MustParse("7")
			c.Resources.Requests["requests.example.com/foo"] = resource.MustParse("7")
			c.Resources.Requests[corev1.ResourcePods] = resource.MustParse("3")
			p.Spec.Containers = []corev1.Container{c}
		}, 1000, 1024 * mi, map[corev1.ResourceName]int64{"hugepages-2Mi": 4 << 20, "kubernetes.io/foo": 1, "attachable-volumes-csi-x": 1}},
		{"quantities are rounded up once per pod, after summing", func(p *corev1.Pod) {
			// 1.5m + 1.5m = 3m (not 2m + 2m); 100.5 + 100.5 bytes = 201.
			p.Spec.Containers = []corev1.Container{container("1.5m", "100.5"), container("1.5m", "100.5")}
		}, 3, 201, nil},
		{"a resize the kubelet actuated counts when larger than the spec", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Containers[0].Name = "main"
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name:               "main",
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Resources:          &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Gi")}},
			}}
		}, 2000, 3072 * mi, nil},
		{"an infeasible resize charges what the kubelet reports, not the spec", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("4", "4Gi")}
			p.Spec.Containers[0].Name = "main"
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name:               "main",
				AllocatedResources: container("1", "1Gi").Resources.Requests,
				Resources:          &corev1.ResourceRequirements{Requests: container("1", "1Gi").Resources.Requests},
			}}
			p.Status.Conditions = []corev1.PodCondition{{
				Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible,
			}}
		}, 1000, 1024 * mi, nil},
		{"a pod-level resize in the status counts when larger", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("1", "1Gi")}
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: container("2", "2Gi").Resources.Requests}
			p.Status.Resources = &corev1.ResourceRequirements{Requests: container("3", "1Gi").Resources.Requests}
			p.Status.AllocatedResources = container("2", "5Gi").Resources.Requests
		}, 3000, 5120 * mi, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := ts.MakePod("ns", "p")
			tc.mutate(pod)
			got := store.PodRequests(pod)
			if got.MilliCPU != tc.wantMilli || got.Memory != tc.wantMem || got.Pods != 1 {
				t.Errorf("got cpu %dm memory %d pods %d, want %dm %d 1", got.MilliCPU, got.Memory, got.Pods, tc.wantMilli, tc.wantMem)
			}
			if !got.Equal(store.Resources{MilliCPU: got.MilliCPU, Memory: got.Memory, Pods: 1, Scalar: tc.wantScalars}) {
				t.Errorf("scalars %v, want %v", got.Scalar, tc.wantScalars)
			}
		})
	}
}

func TestResources_SubRemovesZeroScalarsSoEqualAmountsCompareEqual(t *testing.T) {
	a := store.Resources{MilliCPU: 5, Scalar: map[corev1.ResourceName]int64{"gpu": 1}}
	a.Sub(store.Resources{Scalar: map[corev1.ResourceName]int64{"gpu": 1}})
	if a.Scalar != nil || !a.Equal(store.Resources{MilliCPU: 5}) {
		t.Errorf("after subtracting the only scalar: %+v", a)
	}
	b := store.Resources{MilliCPU: -3, Memory: 4, Scalar: map[corev1.ResourceName]int64{"gpu": -1}}
	b.FloorAtZero()
	if !b.Equal(store.Resources{Memory: 4, Scalar: map[corev1.ResourceName]int64{"gpu": 0}}) {
		t.Errorf("floored: %+v", b)
	}
}

func TestIsScalarResourceName_FollowsKubeScheduler(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"example.com/gpu":          true, // extended
		"example.com/foo":          true,
		"nvidia.com/gpu":           true,
		"hugepages-2Mi":            true,
		"hugepages-1Gi":            true,
		"kubernetes.io/foo":        true, // prefixed native
		"attachable-volumes-csi-x": true,
		"foo":                      false, // neither standard nor qualified
		"gpu":                      false,
		"requests.example.com/foo": false, // a quota name, not a resource
		"example.com/Bad_Name_":    false, // not a qualified name
		"example.com/":             false,
		"a/b/c":                    false,
	} {
		// Twice: the second answer comes from the cache.
		for range 2 {
			if got := store.IsScalarResourceName(name); got != want {
				t.Errorf("IsScalarResourceName(%q) = %v, want %v", name, got, want)
			}
		}
	}
}

func TestResourcesFromList_IgnoresNamesKubeSchedulerIgnores(t *testing.T) {
	got := store.ResourcesFromList(corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1.5m"), corev1.ResourceMemory: resource.MustParse("100.5"),
		corev1.ResourcePods: resource.MustParse("110"), "example.com/gpu": resource.MustParse("2"),
		"example.com/none": resource.MustParse("0"), "foo": resource.MustParse("3"),
	})
	want := store.Resources{MilliCPU: 2, Memory: 101, Pods: 110, Scalar: map[corev1.ResourceName]int64{"example.com/gpu": 2}}
	if !got.Equal(want) || len(got.Scalar) != 1 {
		t.Errorf("got %+v, want %+v (no zero entries)", got, want)
	}
}

// TestPodRequests_LeavesThePodAlone: the helper would grow an inf.Dec-backed pod-level
// request (1.5Gi) by the overhead in place at every call; the pod is shared with the
// informer and the NodeStore recomputes it, so PodRequests must not let it.
func TestPodRequests_LeavesThePodAlone(t *testing.T) {
	pod := ts.MakePod("ns", "p")
	pod.Spec.Containers = []corev1.Container{container("1", "1Gi")}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1.5"), corev1.ResourceMemory: resource.MustParse("1.5Gi"),
	}}
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1Mi")}
	before := pod.DeepCopy()
	want := store.Resources{MilliCPU: 1600, Memory: 1537 << 20, Pods: 1}
	for i := range 3 {
		if got := store.PodRequests(pod); !got.Equal(want) {
			t.Errorf("call %d: %s, want %s", i, show(got.ResourceList()), show(want.ResourceList()))
		}
	}
	if !apiequality.Semantic.DeepEqual(pod, before) {
		t.Errorf("the pod changed: pod-level requests %s, were %s", show(pod.Spec.Resources.Requests), show(before.Spec.Resources.Requests))
	}
}

// show prints a ResourceList as sorted name=quantity pairs.
func show(l corev1.ResourceList) string {
	out := make([]string, 0, len(l))
	for name, q := range l {
		out = append(out, string(name)+"="+q.String())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
