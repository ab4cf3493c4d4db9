package operator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// benchPodBytes are pods the shape of bench-e2e's (bench/e2e/objects.go MakePod): pods of
// ReplicaSets of 10, labels of their template, one owner, the two tolerations the
// admission plugins add, one or two containers whose requests equal their limits, in
// protobuf as the API server sends them.
func benchPodBytes(b *testing.B, n int) [][]byte {
	b.Helper()
	out := make([][]byte, n)
	for i := range out {
		rs, slot := i/10, i%10
		rl := func(cpu, mem string) corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		}
		main := rl(fmt.Sprintf("%dm", 100+100*(slot%5)), fmt.Sprintf("%dMi", 128<<(slot%3)))
		containers := []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: main, Limits: main}}}
		if slot%3 == 0 {
			side := rl("50m", "64Mi")
			containers = append(containers, corev1.Container{Name: "sidecar", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: side, Limits: side}})
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprintf("ns-%d", rs%50), Name: fmt.Sprintf("rs-%d-%d", rs, slot),
				Labels: map[string]string{"app": fmt.Sprintf("app-%d", rs), "tier": "web", "pod-template-hash": fmt.Sprintf("h%06d", rs)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("rs-%d", rs),
					UID: types.UID(fmt.Sprintf("0f6a1e0c-%08d", rs)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%5000), Containers: containers, Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}}},
		}
		raw, err := p.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		out[i] = raw
	}
	return out
}

// BenchmarkPodTransform: the cache's transform of a decoded pod (what the informer calls
// for every pod it stores), per pod; the decode is outside the timer.
func BenchmarkPodTransform(b *testing.B) {
	const batch = 10000
	raws := benchPodBytes(b, batch)
	transform := podTransform(newSharedResourceLists(), false)
	pods := make([]*corev1.Pod, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		b.StopTimer()
		for i, raw := range raws {
			pods[i] = &corev1.Pod{}
			if err := pods[i].Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for i := 0; i < batch && n < b.N; i, n = i+1, n+1 {
			if _, err := transform(pods[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
