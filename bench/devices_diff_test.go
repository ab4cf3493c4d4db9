package bench

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Sizes of the devices differential run.
const (
	devDiffSeed  = 20261126
	devDiffCases = 150
)

// TestDifferential_DevicesMatchKubeScheduler builds random DRA worlds (nodes with labels;
// drivers with node-local pools, pools for all nodes or a node selector and pools selecting
// nodes per device; several generations, pools missing a slice; devices dedicated or
// allowing multiple allocations) and random claims (dedicated, shared by shareID with
// consumed capacity, admin access, devices of an older generation or of no slice), feeds
// them to multicache's handler, and compares the devices store with kube-scheduler
// v1.37.1's own code on the same objects:
//
//   - the allocated devices with its DRA manager's claim tracker (GatherAllocatedState and
//     ListAllAllocatedDevices over an assume cache holding the claims);
//   - the devices each node has, per pool and per class, with its structured allocator
//     (k8s.io/dynamic-resource-allocation/structured, the one kube-scheduler runs): a claim
//     asking for all devices of a class, one pool at a time, on each node, against no
//     allocated device, gets exactly the devices that pool gives the node; it fails when
//     the pool is incomplete;
//
// and then, per node and per class, total, allocated and free.
func TestDifferential_DevicesMatchKubeScheduler(t *testing.T) {
	r := rand.New(rand.NewPCG(devDiffSeed, devDiffSeed))
	var nodesChecked, poolsChecked, devicesChecked, allocatedChecked, failing, consumedChecked int
	for c := range devDiffCases {
		w := newDeviceWorld(r, "")
		got := feedDevices(t, r, w)
		want := kubeSchedulerDevices(t, w)
		n, p, d, a := compareDevices(t, c, w, got, want)
		nodesChecked, poolsChecked, devicesChecked, allocatedChecked = nodesChecked+n, poolsChecked+p, devicesChecked+d, allocatedChecked+a
		consumedChecked += len(want.consumed)
		for _, pools := range want.incomplete {
			failing += pools.Len()
		}
		if t.Failed() {
			t.Fatalf("case %d diverges (seed %d); the world:\n%s", c, devDiffSeed, w)
		}
	}
	t.Logf("%d random cases: %d nodes, %d (node, pool) pairs (%d incomplete), %d published devices, %d allocated devices, %d shared devices' consumed capacity checked against kube-scheduler v1.37.1",
		devDiffCases, nodesChecked, poolsChecked, failing, devicesChecked, allocatedChecked, consumedChecked)
	if devicesChecked == 0 || allocatedChecked == 0 || failing == 0 || consumedChecked == 0 {
		t.Fatal("the generator produced no device, no allocation, no incomplete pool or no share: the comparison checked too little")
	}
}

// compareDevices reports every difference and returns what was compared.
func compareDevices(t *testing.T, c int, w *deviceWorld, got, want devView) (nodes, pools, devices, allocated int) {
	t.Helper()
	if !maps.Equal(got.consumed, want.consumed) {
		t.Errorf("case %d: consumed capacity: multicache %v, kube-scheduler %v", c, got.consumed, want.consumed)
	}
	if !got.allocated.Equal(want.allocated) {
		t.Errorf("case %d: allocated devices: multicache %v, kube-scheduler %v", c, sets.List(got.allocated), sets.List(want.allocated))
	}
	for _, n := range w.nodes {
		nodes++
		pools += len(w.pools)
		name := n.Name
		// An incomplete pool fails kube-scheduler's allocation of every class; multicache
		// flags it on the nodes its slices reach.
		for _, key := range sets.List(want.incomplete[name]) {
			if !got.incomplete[name].Has(key) {
				t.Errorf("case %d, %s: pool %s fails kube-scheduler's allocation, multicache does not flag it", c, name, key)
			}
		}
		for _, key := range sets.List(got.incomplete[name]) {
			if !want.incomplete[name].Has(key) {
				t.Errorf("case %d, %s: multicache flags pool %s, kube-scheduler allocates from it", c, name, key)
			}
		}
		if !got.published[name].Equal(want.published[name]) {
			t.Errorf("case %d, %s: devices: multicache %v, kube-scheduler %v", c, name, sets.List(got.published[name]), sets.List(want.published[name]))
		}
		devices += want.published[name].Len()
		allocated += want.published[name].Intersection(want.allocated).Len()
		classes := slices.Sorted(func(yield func(string) bool) {
			for k := range want.byClass[name] {
				if !yield(k) {
					return
				}
			}
		})
		for k := range got.byClass[name] {
			if _, ok := want.byClass[name][k]; !ok {
				classes = append(classes, k)
			}
		}
		for _, class := range classes {
			if got.byClass[name][class] != want.byClass[name][class] {
				t.Errorf("case %d, %s, class %s: multicache %+v, kube-scheduler %+v", c, name, class, got.byClass[name][class], want.byClass[name][class])
			}
		}
	}
	return nodes, pools, devices, allocated
}
