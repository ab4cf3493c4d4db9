package nodestore

import (
	"fmt"
	"hash/maphash"
	"slices"
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
	h, err := stores.NewCacheHandler(stores.Config{})
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

// TestCheckInvariants_FindsADRAChargeThatDoesNotFollowTheDecision: the check splits every
// remembered charge as the node decides now, so a node whose sums kept an old decision (a
// class came and the node was not re-split) is reported.
func TestCheckInvariants_FindsADRAChargeThatDoesNotFollowTheDecision(t *testing.T) {
	h, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(h)
	served := false
	h.SetExtendedResourceResolver(func(name corev1.ResourceName) (string, bool) { return "gpus", served && name == "example.com/gpu" })
	s.AddNode(ts.MakeNode("n", "8", "32Gi"))
	p := ts.MakePod("ns", "p", ts.OnNode("n"), ts.Requests("1", "1Gi"))
	p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("2")
	p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "p-extended-resources-abcde"}
	s.AddPod(p)
	if errs := s.CheckInvariants(); len(errs) != 0 {
		t.Fatalf("charged to the node while no class serves it: %v", errs)
	}
	served = true // the class arrives, unannounced: the node keeps the old split
	errs := s.CheckInvariants()
	if len(errs) != 2 || !strings.Contains(fmt.Sprint(errs), "DRA-served requested is map[]") {
		t.Errorf("violations %v; want requested and DRA-served requested off their pods' charges", errs)
	}
	h.ExtendedResourcesChanged("example.com/other")
	if errs := s.CheckInvariants(); len(errs) != 2 {
		t.Errorf("told about another resource only, the node was re-split: %v", errs)
	}
	h.ExtendedResourcesChanged("example.com/gpu")
	if errs := s.CheckInvariants(); len(errs) != 0 {
		t.Errorf("after the NodeStore was told: %v", errs)
	}
	if info, _ := s.Get("n"); info.DRARequested.Scalar["example.com/gpu"] != 2 || info.Requested.Scalar["example.com/gpu"] != 0 {
		t.Errorf("requested %v, DRA %v; want the GPUs DRA's", info.Requested.ResourceList(), info.DRARequested.ResourceList())
	}
}

// TestCheckInvariants_FindsAPodOnTwoNodes: two objects of one pod, each held by another node
// (what an update that moved a pod without the delete would leave), are reported once, naming
// both nodes; pods of the same name in other namespaces, a namespace that is a prefix of
// another and other names are not. The same holds when every key hashes alike: the check
// compares the keys of equal hashes.
func TestCheckInvariants_FindsAPodOnTwoNodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash func(*maphash.Hash, *corev1.Pod) uint64
	}{
		{"hashes of the keys", podKeyHash},
		{"every key hashed alike", func(*maphash.Hash, *corev1.Pod) uint64 { return 7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(f func(*maphash.Hash, *corev1.Pod) uint64) { podKeyHash = f }(podKeyHash)
			podKeyHash = tc.hash
			h, err := stores.NewCacheHandler(stores.Config{})
			if err != nil {
				t.Fatal(err)
			}
			s := New(h)
			for _, n := range []string{"c", "b", "a"} {
				s.AddNode(ts.MakeNode(n, "64", "256Gi"))
			}
			for i, key := range [][2]string{{"ns", "p"}, {"ns-2", "p"}, {"ns2", "p"}, {"n", "p"}, {"ns", "q"}, {"ns", "r"}} {
				s.AddPod(ts.MakePod(key[0], key[1], ts.OnNode([]string{"a", "b", "c"}[i%3]), ts.Requests("1", "1Gi")))
			}
			if errs := s.CheckInvariants(); len(errs) != 0 {
				t.Fatalf("one pod per key: %v", errs)
			}
			// Two pods again, other objects bound to other nodes: reported in the keys' order.
			s.AddPod(ts.MakePod("ns", "q", ts.OnNode("a"), ts.Requests("1", "1Gi")))
			s.AddPod(ts.MakePod("ns", "p", ts.OnNode("c"), ts.Requests("1", "1Gi")))
			var got []string
			for _, err := range s.CheckInvariants() {
				got = append(got, err.Error())
			}
			if want := []string{"node c: pod ns/p is also on node a", "node b: pod ns/q is also on node a"}; !slices.Equal(got, want) {
				t.Errorf("violations %q; want %q", got, want)
			}
		})
	}
}
