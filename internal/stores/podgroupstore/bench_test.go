package podgroupstore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkPodGroup_UpdatePod is the store's cost of one pod update, the hot event: for a pod
// of no group (most pods) and for a member moving from Pending to Running.
func BenchmarkPodGroup_UpdatePod(b *testing.B) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts []ts.PodOption
	}{
		{"no-group", []ts.PodOption{ts.WithLabels("app", "web", "pod-template-hash", "5d4f8c")}},
		{"member", []ts.PodOption{ts.WithLabels("app", "web", "pod-template-hash", "5d4f8c"), ts.InGroup("gang")}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := podgroupstore.New(config)
			s.AddPodGroup(ts.MakePodGroup("ns", "gang", 3))
			pending := ts.MakePod("ns", "p", append(bc.opts, ts.OnNode("n1"))...)
			running := ts.MakePod("ns", "p", append(bc.opts, ts.OnNode("n1"), ts.InPhase(corev1.PodRunning))...)
			s.AddPod(pending)
			b.ReportAllocs()
			for i := range b.N {
				if i%2 == 0 {
					s.UpdatePod(pending, running)
				} else {
					s.UpdatePod(running, pending)
				}
				s.TakeOutbox() // as the handler does after every call
			}
		})
	}
}
