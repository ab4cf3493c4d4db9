package multicache

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Edges of a fork found in review, each against a cache built with the same changes where
// the cache answers.

// A fork that adds the first member of a group that has no PodGroup object: the cache
// then answers the group (members only), the fork does not.
func TestFork_AGroupWithoutAnObjectAppearsWithItsFirstMember(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	snap := w.snapshot(t)
	f := snap.Fork()
	p := ts.MakePod("ns", "solo", ts.InGroup("adhoc"), ts.Requests("100m", "1Mi"))
	if err := f.AddPod(p, "n0"); err != nil {
		t.Fatal(err)
	}
	pods := maps.Clone(w.pods)
	q := p.DeepCopy()
	q.Spec.NodeName = "n0"
	pods[types.NamespacedName{Namespace: "ns", Name: "solo"}] = q
	sameGroup(t, f, w, pods, types.NamespacedName{Namespace: "ns", Name: "adhoc"})
}

// A terminal pod added by a fork: the cache's PodsOnNode leaves it out (NodeInfo.Pods).
func TestFork_PodsOnNodeLeavesOutAFinishedPodItPlaced(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	snap := w.snapshot(t)
	f := snap.Fork()
	p := ts.MakePod("ns", "done")
	p.Status.Phase = corev1.PodSucceeded
	if err := f.AddPod(p, "n0"); err != nil {
		t.Fatal(err)
	}
	if err := f.AddPod(ts.MakePod("a", "first"), "n0"); err != nil {
		t.Fatal(err)
	}
	info, _ := f.NodeInfo("n0")
	on := f.PodsOnNode("n0")
	if !slices.IsSortedFunc(on, func(a, b store.PodStatus) int {
		return strings.Compare(a.Pod.Namespace+"/"+a.Pod.Name, b.Pod.Namespace+"/"+b.Pod.Name)
	}) {
		t.Errorf("PodsOnNode(n0) not by namespace/name: %v", on)
	}
	for _, ps := range on {
		if ps.Pod.Name == "done" {
			t.Errorf("PodsOnNode(n0) holds the finished pod; NodeInfo.Pods has %d pods", len(info.Pods))
		}
	}
}

func TestFork_ANilPodIsAnErrorNotAPanic(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	f := w.snapshot(t).Fork()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("AddPod(nil) panics: %v", r)
		}
	}()
	if err := f.AddPod(nil, "n0"); err == nil {
		t.Error("AddPod(nil): no error")
	}
}

// Removing the only member of a group with no PodGroup object: the cache forgets the group.
func TestFork_AGroupWithoutAnObjectGoesWithItsLastMember(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	p := ts.MakePod("ns", "solo", ts.InGroup("adhoc"), ts.OnNode("n0"), ts.Requests("100m", "1Mi"))
	w.pods[types.NamespacedName{Namespace: "ns", Name: "solo"}] = p
	snap := w.snapshot(t)
	f := snap.Fork()
	if err := f.RemovePod(types.NamespacedName{Namespace: "ns", Name: "solo"}); err != nil {
		t.Fatal(err)
	}
	pods := maps.Clone(w.pods)
	delete(pods, types.NamespacedName{Namespace: "ns", Name: "solo"})
	sameGroup(t, f, w, pods, types.NamespacedName{Namespace: "ns", Name: "adhoc"})
}

// Removing a finished pod is not a disruption: the eviction API ignores budgets for
// Succeeded, Failed and Pending pods (and pods being deleted).
func TestFork_RemovingAFinishedPodDisruptsNoBudget(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	done := ts.MakePod("ns", "done", ts.WithLabels("app", "web"), ts.OnNode("n0"))
	done.Status.Phase = corev1.PodSucceeded
	w.pods[types.NamespacedName{Namespace: "ns", Name: "done"}] = done
	f := w.snapshot(t).Fork()
	probe := ts.MakePod("ns", "probe", ts.WithLabels("app", "web"))
	before := f.PDBsForPod(probe)[0].AllowedDisruptions
	if err := f.RemovePod(types.NamespacedName{Namespace: "ns", Name: "done"}); err != nil {
		t.Fatal(err)
	}
	if after := f.PDBsForPod(probe)[0].AllowedDisruptions; after != before {
		t.Errorf("removing a Succeeded pod: budget allows %d, was %d", after, before)
	}
}

// A node the fork changed reads with a generation of its own: a memo keyed on generations
// (a scheduler plugin's) never takes it for the snapshot's node.
func TestFork_AChangedNodeHasAGenerationOfItsOwn(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	snap := w.snapshot(t)
	base, _ := snap.NodeInfo("n0")
	f := snap.Fork()
	if err := f.AddPod(ts.MakePod("ns", "extra", ts.Requests("100m", "1Mi")), "n0"); err != nil {
		t.Fatal(err)
	}
	first, _ := f.NodeInfo("n0")
	if first.Generation == base.Generation {
		t.Errorf("changed node at the snapshot's generation %d", base.Generation)
	}
	if err := f.RemovePod(types.NamespacedName{Namespace: "ns", Name: "extra"}); err != nil {
		t.Fatal(err)
	}
	if again, _ := f.NodeInfo("n0"); again.Generation == first.Generation {
		t.Errorf("changed again, same generation %d", again.Generation)
	}
}

// sameGroup checks that the fork answers the group as a cache holding pods does.
func sameGroup(t *testing.T, f *Fork, w forkWorld, pods map[types.NamespacedName]*corev1.Pod, key types.NamespacedName) {
	t.Helper()
	g, gok := f.PodGroup(key)
	e, eok := readerOf(w.cache(t, pods, nil)).PodGroup(key)
	if gok != eok || g.Counts != e.Counts {
		t.Errorf("fork PodGroup(%s) = %+v %v; cache = %+v %v", key, g.Counts, gok, e.Counts, eok)
	}
}
