package nodestore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// config is the CacheHandler of the store newStore built last.
var config *stores.CacheHandler

func newStore(t *testing.T) *nodestore.Store {
	t.Helper()
	var err error
	if config, err = stores.NewCacheHandler(stores.Config{}); err != nil {
		t.Fatal(err)
	}
	return nodestore.New(config)
}

func checkInvariants(t *testing.T, s *nodestore.Store) {
	t.Helper()
	for _, err := range s.CheckInvariants() {
		t.Error("invariant:", err)
	}
}

func TestMergedPools_FollowTheMergeRule(t *testing.T) {
	cases := []struct {
		name                 string
		node                 *corev1.Node
		withNM, withCNR      bool
		nmCap, nmAlloc       [2]string
		wantCPU, wantMemGiB  int64
		wantBECPU, wantBEMem int64
	}{
		{name: "node only", node: ts.MakeNode("n", "16", "64Gi"), wantCPU: 16000, wantMemGiB: 64},
		{name: "nmnode only", withNM: true, nmCap: [2]string{"16", "64Gi"}, nmAlloc: [2]string{"14", "60Gi"}, wantCPU: 14000, wantMemGiB: 60},
		{name: "both: node minus what the node manager keeps back", node: ts.MakeNode("n", "16", "64Gi"), withNM: true,
			nmCap: [2]string{"16", "64Gi"}, nmAlloc: [2]string{"14", "60Gi"}, wantCPU: 14000, wantMemGiB: 60},
		{name: "both: floored at zero", node: ts.MakeNode("n", "2", "4Gi"), withNM: true,
			nmCap: [2]string{"16", "64Gi"}, nmAlloc: [2]string{"10", "50Gi"}, wantCPU: 0, wantMemGiB: 0},
		{name: "both: allocatable above capacity keeps nothing back", node: ts.MakeNode("n", "8", "8Gi"), withNM: true,
			nmCap: [2]string{"4", "4Gi"}, nmAlloc: [2]string{"6", "6Gi"}, wantCPU: 8000, wantMemGiB: 8},
		{name: "cnr is the best-effort pool", node: ts.MakeNode("n", "16", "64Gi"), withCNR: true,
			wantCPU: 16000, wantMemGiB: 64, wantBECPU: 6000, wantBEMem: 24},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nm = ts.MakeNMNode("n", tc.nmCap[0], tc.nmCap[1], tc.nmAlloc[0], tc.nmAlloc[1])
			if !tc.withNM {
				nm = nil
			}
			cnr := ts.MakeCNR("n", "6", "24Gi")
			if !tc.withCNR {
				cnr = nil
			}
			alloc, _, be := nodestore.MergedPools(tc.node, nm, cnr)
			if alloc.MilliCPU != tc.wantCPU || alloc.Memory>>30 != tc.wantMemGiB {
				t.Errorf("allocatable %dm/%dGi, want %dm/%dGi", alloc.MilliCPU, alloc.Memory>>30, tc.wantCPU, tc.wantMemGiB)
			}
			if be.MilliCPU != tc.wantBECPU || be.Memory>>30 != tc.wantBEMem {
				t.Errorf("best-effort %dm/%dGi, want %dm/%dGi", be.MilliCPU, be.Memory>>30, tc.wantBECPU, tc.wantBEMem)
			}
		})
	}
}

func TestNodeInfo_LivesWhileAnySourceOrPodRefersToIt(t *testing.T) {
	s := newStore(t)
	pod := ts.MakePod("ns", "early", ts.OnNode("n"), ts.Requests("1", "1Gi"))
	s.AddPod(pod) // before its node: kept, not lost
	info, ok := s.Get("n")
	if !ok || len(info.Pods) != 1 || info.Requested.MilliCPU != 1000 {
		t.Fatalf("pod before node: %+v %v", info, ok)
	}
	node, nm, cnr := ts.MakeNode("n", "16", "64Gi"), ts.MakeNMNode("n", "16", "64Gi", "14", "60Gi"), ts.MakeCNR("n", "6", "24Gi")
	s.AddNode(node)
	s.AddNMNode(nm)
	s.AddCNR(cnr)
	if info, _ = s.Get("n"); info.Allocatable.MilliCPU != 14000 || info.BestEffortAllocatable.MilliCPU != 6000 {
		t.Errorf("all sources: allocatable %dm, best-effort %dm", info.Allocatable.MilliCPU, info.BestEffortAllocatable.MilliCPU)
	}
	s.DeleteNode(node)
	if info, ok = s.Get("n"); !ok || info.Allocatable.MilliCPU != 14000 || info.Node != nil {
		t.Errorf("without the Node: %v, allocatable %dm (want the NMNode's 14000m)", ok, info.Allocatable.MilliCPU)
	}
	s.DeleteNMNode(nm)
	if info, ok = s.Get("n"); !ok || !info.Allocatable.IsZero() || info.BestEffortAllocatable.MilliCPU != 6000 {
		t.Errorf("CNR only: %v %+v", ok, info)
	}
	s.DeleteCNR(cnr)
	if _, ok = s.Get("n"); !ok {
		t.Error("the pod still refers to the node, but the NodeInfo is gone")
	}
	s.DeletePod(pod)
	if _, ok = s.Get("n"); ok {
		t.Error("nothing refers to the node any more, but the NodeInfo stays")
	}
	checkInvariants(t, s)
}

func TestRequested_SplitsPoolsAndReleasesTerminalPods(t *testing.T) {
	s := newStore(t)
	s.AddNode(ts.MakeNode("n", "16", "64Gi"))
	g := ts.MakePod("ns", "g", ts.OnNode("n"), ts.Requests("2", "4Gi"))
	be := ts.MakePod("ns", "be", ts.OnNode("n"), ts.Requests("1", "1Gi"), ts.BestEffort())
	s.AddPod(g)
	s.AddPod(be)
	info, _ := s.Get("n")
	if info.Requested.MilliCPU != 2000 || info.BestEffortRequested.MilliCPU != 1000 {
		t.Errorf("requested %dm, best-effort %dm; want 2000m and 1000m", info.Requested.MilliCPU, info.BestEffortRequested.MilliCPU)
	}
	if free := info.Free(); free.MilliCPU != 14000 {
		t.Errorf("free %dm, want 14000m", free.MilliCPU)
	}
	resized := ts.MakePod("ns", "g", ts.OnNode("n"), ts.Requests("3", "4Gi"))
	s.UpdatePod(g, resized)
	if info, _ = s.Get("n"); info.Requested.MilliCPU != 3000 {
		t.Errorf("after resize: requested %dm, want 3000m", info.Requested.MilliCPU)
	}
	done := ts.MakePod("ns", "g", ts.OnNode("n"), ts.Requests("3", "4Gi"), ts.InPhase(corev1.PodSucceeded))
	s.UpdatePod(resized, done)
	if info, _ = s.Get("n"); info.Requested.MilliCPU != 0 || len(info.Pods) != 1 {
		t.Errorf("after the pod succeeded: requested %dm, %d pods; want 0m and only the best-effort pod", info.Requested.MilliCPU, len(info.Pods))
	}
	checkInvariants(t, s)
}

// TestUpdatePod_StatusOnlyChangesMoveTheCharge follows one pod through an in-place resize
// as the API reports it, where most steps change only the status: the node's charge must
// follow kube-scheduler's formula (per resource, the larger of the spec and what the kubelet
// allocated or actuated; only the kubelet's figures while the resize is Infeasible).
func TestUpdatePod_StatusOnlyChangesMoveTheCharge(t *testing.T) {
	s := newStore(t)
	s.AddNode(ts.MakeNode("n", "16", "64Gi"))
	other := ts.MakePod("ns", "other", ts.OnNode("n"), ts.Requests("500m", "512Mi"))
	s.AddPod(other)
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	pod := ts.MakePod("ns", "p", ts.OnNode("n"), ts.Requests("1", "1Gi"), ts.InPhase(corev1.PodRunning))
	s.AddPod(pod)
	steps := []struct {
		name     string
		mutate   func(*corev1.Pod)
		wantCPU  int64 // milli, this pod's share
		wantMemM int64 // MiB, this pod's share
	}{
		{"the kubelet reports what it allocated and actuated", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "main", AllocatedResources: list("1", "1Gi"),
				Resources: &corev1.ResourceRequirements{Requests: list("1", "1Gi")},
			}}
		}, 1000, 1024},
		{"a resize up is requested (spec only)", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = list("4", "2Gi")
		}, 4000, 2048},
		{"the kubelet declares it infeasible: only the status counts", func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible,
			})
		}, 1000, 1024},
		{"a smaller resize is requested, still infeasible", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = list("2", "2Gi")
		}, 1000, 1024},
		{"it becomes feasible: the condition goes, the spec counts again", func(p *corev1.Pod) {
			p.Status.Conditions = nil
		}, 2000, 2048},
		{"the kubelet allocates it (status only)", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].AllocatedResources = list("2", "2Gi")
		}, 2000, 2048},
		{"a resize down is requested: the actuated size counts until the kubelet shrinks", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = list("500m", "512Mi")
			p.Status.ContainerStatuses[0].Resources.Requests = list("2", "2Gi")
		}, 2000, 2048},
		{"the kubelet allocates and actuates the shrink (status only)", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].AllocatedResources = list("500m", "512Mi")
			p.Status.ContainerStatuses[0].Resources.Requests = list("500m", "512Mi")
		}, 500, 512},
		{"pod-level resources are set with their status", func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: list("1", "1Gi")}
			p.Status.Resources = &corev1.ResourceRequirements{Requests: list("1", "1Gi")}
			p.Status.AllocatedResources = list("1", "1Gi")
		}, 1000, 1024},
		{"the kubelet reports a larger pod-level allocation (status only)", func(p *corev1.Pod) {
			p.Status.AllocatedResources = list("3", "1Gi")
		}, 3000, 1024},
	}
	for _, step := range steps {
		next := pod.DeepCopy()
		step.mutate(next)
		before, _ := s.Get("n")
		generation := before.Generation
		s.UpdatePod(pod, next)
		pod = next
		info, _ := s.Get("n")
		wantCPU, wantMem := step.wantCPU+500, (step.wantMemM+512)<<20
		if info.Requested.MilliCPU != wantCPU || info.Requested.Memory != wantMem || info.Requested.Pods != 2 {
			t.Errorf("%s: node requests %dm, %dMi, %d pods; want %dm, %dMi, 2 pods", step.name,
				info.Requested.MilliCPU, info.Requested.Memory>>20, info.Requested.Pods, wantCPU, wantMem>>20)
		}
		if info.Generation <= generation {
			t.Errorf("%s: the node's generation did not move (%d)", step.name, info.Generation)
		}
		checkInvariants(t, s)
	}
	s.DeletePod(pod)
	if info, _ := s.Get("n"); !info.Requested.Equal(store.PodRequests(other)) {
		t.Errorf("after the delete: node requests %v, want only the other pod's", info.Requested.ResourceList())
	}
	checkInvariants(t, s)
}

// TestCharges_FollowTheHeldObjectWhateverCopyAnEventCarries updates and deletes pods with
// copies of the objects the node holds (not the same pointers): each charge is released
// exactly as it was added and no remembered charge outlives its pod (the invariants count
// them).
func TestCharges_FollowTheHeldObjectWhateverCopyAnEventCarries(t *testing.T) {
	s := newStore(t)
	s.AddNode(ts.MakeNode("n", "16", "64Gi"))
	a := ts.MakePod("ns", "a", ts.OnNode("n"), ts.Requests("1", "1Gi"))
	b := ts.MakePod("ns", "b", ts.OnNode("n"), ts.Requests("2", "2Gi"))
	s.AddPod(a)
	s.AddPod(b)
	checkInvariants(t, s)
	same := a.DeepCopy()
	same.ResourceVersion = "2"
	s.UpdatePod(a.DeepCopy(), same) // same charge: the held object is swapped
	checkInvariants(t, s)
	bigger := ts.MakePod("ns", "b", ts.OnNode("n"), ts.Requests("3", "2Gi"))
	s.UpdatePod(b.DeepCopy(), bigger) // new charge
	checkInvariants(t, s)
	if info, _ := s.Get("n"); info.Requested.MilliCPU != 4000 || info.Requested.Pods != 2 {
		t.Errorf("requested %dm, %d pods; want 4000m, 2 pods", info.Requested.MilliCPU, info.Requested.Pods)
	}
	// A copy that disagrees with the held object (a stale or later version) releases what
	// the held object was charged, not what the copy asks for.
	stale := same.DeepCopy()
	stale.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("5")
	s.DeletePod(stale)
	if info, _ := s.Get("n"); info.Requested.MilliCPU != 3000 || info.Requested.Pods != 1 {
		t.Errorf("after deleting a: requested %dm, %d pods; want 3000m, 1 pod", info.Requested.MilliCPU, info.Requested.Pods)
	}
	checkInvariants(t, s)
	s.DeletePod(bigger.DeepCopy())
	if info, _ := s.Get("n"); !info.Requested.IsZero() || len(info.Pods) != 0 {
		t.Errorf("after deleting both: requested %v, %d pods", info.Requested.ResourceList(), len(info.Pods))
	}
	checkInvariants(t, s)
}

func TestSnapshot_CopiesOnlyChangedNodesInPlaceAndDropsDeletedOnes(t *testing.T) {
	s := newStore(t)
	for _, n := range []string{"a", "b", "c"} {
		s.AddNode(ts.MakeNode(n, "4", "8Gi", "zone", n))
	}
	snap := s.NewSnapshot(store.SnapshotOptions{}).(*nodestore.Snapshot)
	s.UpdateSnapshot(snap, 0)
	at := config.Generations().Current()
	held, _ := snap.Get("a")
	untouched, _ := snap.Get("b")
	untouchedGen := untouched.Generation

	s.AddPod(ts.MakePod("ns", "p", ts.OnNode("a"), ts.Requests("1", "1Gi")))
	s.DeleteNode(ts.MakeNode("c", "4", "8Gi"))
	s.UpdateSnapshot(snap, at)

	if held.Requested.MilliCPU != 1000 {
		t.Errorf("a reader's pointer to node a was not refreshed in place: requested %dm", held.Requested.MilliCPU)
	}
	if b, _ := snap.Get("b"); b.Generation != untouchedGen {
		t.Error("node b did not change but was copied")
	}
	if _, ok := snap.Get("c"); ok || snap.Len() != 2 || len(snap.List()) != 2 {
		t.Errorf("deleted node c still in the snapshot (len %d, list %d)", snap.Len(), len(snap.List()))
	}
	// The live NodeInfo keeps changing; the snapshot must not.
	s.AddPod(ts.MakePod("ns", "q", ts.OnNode("a"), ts.Requests("1", "1Gi")))
	if held.Requested.MilliCPU != 1000 || len(held.Pods) != 1 {
		t.Error("the snapshot shares state with the live cache")
	}
}

func TestSnapshot_SubClusterKeepsOnlyItsNodes(t *testing.T) {
	s := newStore(t)
	s.AddNode(ts.MakeNode("in", "4", "8Gi", "shard", "a"))
	s.AddNode(ts.MakeNode("out", "4", "8Gi", "shard", "b"))
	snap := s.NewSnapshot(store.SnapshotOptions{NodeFilter: func(i *store.NodeInfo) bool { return i.Labels()["shard"] == "a" }}).(*nodestore.Snapshot)
	s.UpdateSnapshot(snap, 0)
	at := config.Generations().Current()
	if _, ok := snap.Get("out"); ok || snap.Len() != 1 {
		t.Fatalf("sub-cluster snapshot has %d nodes", snap.Len())
	}
	// A node that leaves the sub-cluster leaves the snapshot.
	s.UpdateNode(nil, ts.MakeNode("in", "4", "8Gi", "shard", "b"))
	s.UpdateSnapshot(snap, at)
	if snap.Len() != 0 {
		t.Errorf("node relabelled out of the sub-cluster is still in the snapshot")
	}
}
