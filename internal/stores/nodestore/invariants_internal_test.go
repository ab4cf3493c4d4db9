package nodestore

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestCheckInvariants_RecomputesEveryChargeWithinItsRotation mutates a held pod in place
// (what kube-scheduler's request helper does to pod-level requests if handed the cache's own
// object): the remembered charge and the node's sums still agree, so only recomputing the
// pod's requests finds it. With 10 pods and 3 recomputed per check, one of every 4 checks
// recomputes each pod.
func TestCheckInvariants_RecomputesEveryChargeWithinItsRotation(t *testing.T) {
	defer func(n int) { recomputedPerCheck = n }(recomputedPerCheck)
	recomputedPerCheck = 3
	h, err := stores.NewCacheHandlerBuilder().Build()
	if err != nil {
		t.Fatal(err)
	}
	s := New(h)
	s.AddNode(ts.MakeNode("n", "64", "256Gi"))
	var pods []*corev1.Pod
	for i := range 10 {
		p := ts.MakePod("ns", fmt.Sprintf("p-%d", i), ts.OnNode("n"), ts.Requests("1", "1Gi"))
		s.AddPod(p)
		pods = append(pods, p)
	}
	for range 4 {
		if errs := s.CheckInvariants(); len(errs) != 0 {
			t.Fatalf("before the mutation: %v", errs)
		}
	}
	pods[7].Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	found := 0
	for range 4 {
		for _, err := range s.CheckInvariants() {
			if !strings.Contains(err.Error(), "pod ns/p-7 was charged") {
				t.Errorf("unexpected violation: %v", err)
			}
			found++
		}
	}
	if found != 1 {
		t.Errorf("4 checks found the wrong charge %d times, want exactly once", found)
	}
}
