package devicestore_test

import (
	"testing"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestClusterCounts_ASharedDeviceCountsOnce: the node views count a shared device on every
// node it reaches; the cluster's counts (what multicache_devices reports) count it once, per
// class too; a class accepting no device is there with zeros; a device in two classes is in
// both.
func TestClusterCounts_ASharedDeviceCountsOnce(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddNode(node("n2"))
	s.AddDeviceClass(makeClass("nics", `device.driver == "net.example.com"`))
	s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
	s.AddDeviceClass(makeClass("anything", `true`))
	s.AddDeviceClass(makeClass("fpgas", `device.driver == "fpga.example.com"`))
	s.AddResourceSlice(makeSlice("net", "net.example.com", "fabric", 1, 1, devs("nic", 2), allNodes()))
	s.AddResourceSlice(makeSlice("n1-gpus", "gpu.example.com", "n1", 1, 1, devs("gpu", 4), onNode("n1")))
	s.AddResourceSlice(makeSlice("n2-gpus", "gpu.example.com", "n2", 1, 1, devs("gpu", 4), onNode("n2")))
	s.AddResourceClaim(makeClaim("ns", "nic", result{"net.example.com", "fabric", "nic0", "", false}))
	s.AddResourceClaim(makeClaim("ns", "gpus", result{"gpu.example.com", "n1", "gpu0", "", false}, result{"gpu.example.com", "n2", "gpu3", "", false}))

	if got := nodeView(t, s, "n1").ByClass["nics"]; got != counts(2, 1) {
		t.Fatalf("n1 nics %+v: the shared pool does not reach the node", got)
	}
	all, byClass := s.ClusterCounts()
	if all != counts(2+8, 3) {
		t.Errorf("all devices %+v, want %+v (the 2 shared NICs once, not on each of 2 nodes)", all, counts(10, 3))
	}
	for class, want := range map[string]store.DeviceCounts{"nics": counts(2, 1), "gpus": counts(8, 2), "anything": counts(10, 3), "fpgas": counts(0, 0)} {
		got, ok := byClass[class]
		if !ok || got != want {
			t.Errorf("class %s: %+v (present %v), want %+v", class, got, ok, want)
		}
	}
	if len(byClass) != 4 {
		t.Errorf("classes %v, want the 4 known", byClass)
	}
}
