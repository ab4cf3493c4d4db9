package devicestore_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

const gpu = "gpu.example.com"

func TestDevices_NewestGenerationCountsAndClaimsTakeDevices(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
	s.AddResourceSlice(makeSlice("old", gpu, "n1", 1, 1, devs("old", 2), onNode("n1")))
	s.AddResourceSlice(makeSlice("new", gpu, "n1", 2, 1, devs("gpu", 4), onNode("n1")))
	claim := makeClaim("ns", "c", result{gpu, "n1", "gpu0", "", false}, result{gpu, "n1", "gpu1", "", false})
	s.AddResourceClaim(claim)

	v := nodeView(t, s, "n1")
	if v.DeviceCounts != counts(4, 2) {
		t.Errorf("node: %+v, want 4 total, 2 allocated, 2 free", v.DeviceCounts)
	}
	if got := v.ByClass["gpus"]; got != counts(4, 2) {
		t.Errorf("class gpus: %+v, want 4 total, 2 allocated, 2 free", got)
	}
	if p := v.ByPool[gpu+"/n1"]; p.Generation != 2 || p.Total != 4 || p.Incomplete || p.Shared != 0 {
		t.Errorf("pool: %+v, want generation 2, 4 devices, complete, none shared", p)
	}
	noViolations(t, s)

	s.UpdateResourceClaim(claim, makeClaim("ns", "c"))
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(4, 0) || v.ByClass["gpus"] != counts(4, 0) {
		t.Errorf("claim deallocated: %+v, want 0 allocated", v)
	}
	s.DeleteResourceSlice(makeSlice("new", gpu, "n1", 2, 1, devs("gpu", 4), onNode("n1")))
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(2, 0) {
		t.Errorf("newest generation deleted: %+v, want the older generation's 2 devices", v.DeviceCounts)
	}
	s.DeleteResourceSlice(makeSlice("old", gpu, "n1", 1, 1, devs("old", 2), onNode("n1")))
	if _, ok := s.Node("n1"); ok || s.Len() != 1 {
		t.Errorf("every slice deleted: the node still has devices, or the store holds %d objects (want the class)", s.Len())
	}
}

func TestDevices_IncompletePoolIsFlaggedAndNotCounted(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("a", gpu, "p", 3, 2, devs("a", 2), onNode("n1")))
	v := nodeView(t, s, "n1")
	if p := v.ByPool[gpu+"/p"]; !p.Incomplete || p.Total != 0 || v.Total != 0 {
		t.Errorf("one slice of two: %+v, want an incomplete pool counting nothing", v)
	}
	s.AddResourceSlice(makeSlice("b", gpu, "p", 3, 2, devs("b", 3), onNode("n1")))
	if v := nodeView(t, s, "n1"); v.ByPool[gpu+"/p"].Incomplete || v.Total != 5 {
		t.Errorf("both slices: %+v, want a complete pool of 5", v)
	}
	// A device name used twice makes the pool invalid: kube-scheduler allocates nothing.
	s.UpdateResourceSlice(makeSlice("b", gpu, "p", 3, 2, devs("b", 3), onNode("n1")), makeSlice("b", gpu, "p", 3, 2, devs("a", 1), onNode("n1")))
	if v := nodeView(t, s, "n1"); !v.ByPool[gpu+"/p"].Invalid || v.Total != 0 {
		t.Errorf("duplicate device name: %+v, want an invalid pool counting nothing", v)
	}
	noViolations(t, s)
}

func TestDevices_SharedPoolsReachEveryNodeTheySelect(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1", "rack", "a"))
	s.AddNode(node("n2", "rack", "b"))
	s.AddResourceSlice(makeSlice("net", "net.example.com", "fabric", 1, 1, devs("nic", 2), allNodes()))
	s.AddResourceSlice(makeSlice("rack-a", "fpga.example.com", "rack-a", 1, 1, devs("fpga", 3), selecting("rack", "a")))
	s.AddResourceSlice(makeSlice("mixed", "x.example.com", "mixed", 1, 1, devs("x", 2), perDevice("n2", "*")))
	s.AddNode(node("n3", "rack", "a")) // a node coming later is reached too

	for name, want := range map[string]int{"n1": 2 + 3 + 1, "n2": 2 + 0 + 2, "n3": 2 + 3 + 1} {
		if v := nodeView(t, s, name); v.Total != want {
			t.Errorf("%s: %d devices %+v, want %d", name, v.Total, v.ByPool, want)
		}
	}
	v := nodeView(t, s, "n2")
	if p := v.ByPool["x.example.com/mixed"]; p.Shared != 1 {
		t.Errorf("per-device selection on n2: %+v, want 1 shared (all nodes) and 1 by name", p)
	}
	if p := v.ByPool["net.example.com/fabric"]; p.Shared != 2 {
		t.Errorf("all-nodes pool on n2: %+v, want its 2 devices shared", p)
	}
	// An allocated shared device is allocated on every node it reaches.
	s.AddResourceClaim(makeClaim("ns", "c", result{"net.example.com", "fabric", "nic0", "", false}))
	for _, name := range []string{"n1", "n2", "n3"} {
		if got := nodeView(t, s, name).ByPool["net.example.com/fabric"]; got.Allocated != 1 {
			t.Errorf("%s: fabric %+v, want nic0 allocated", name, got)
		}
	}
	// Labels change: the selector follows; a deleted node is reached no more.
	s.UpdateNode(node("n1", "rack", "a"), node("n1", "rack", "b"))
	if v := nodeView(t, s, "n1"); v.Total != 2+1 {
		t.Errorf("n1 moved to rack b: %d devices, want 3", v.Total)
	}
	s.DeleteNode(node("n3", "rack", "a"))
	if _, ok := s.Node("n3"); ok {
		t.Errorf("deleted node n3 still has devices: %+v", nodeView(t, s, "n3"))
	}
	noViolations(t, s)
}

func TestDevices_ClaimsCountAsKubeSchedulerCountsThem(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	s.AddResourceSlice(makeSlice("m", "mem.example.com", "n1", 1, 1, devs("m", 1), onNode("n1"), multiAlloc()))
	s.AddResourceClaim(makeClaim("ns", "admin", result{gpu, "n1", "gpu0", "", true}))
	if v := nodeView(t, s, "n1"); v.Allocated != 0 {
		t.Errorf("admin access: %d allocated, want 0 (kube-scheduler does not count it)", v.Allocated)
	}
	s.AddResourceClaim(makeClaim("ns", "share1", result{"mem.example.com", "n1", "m0", "a", false}))
	s.AddResourceClaim(makeClaim("ns", "share2", result{"mem.example.com", "n1", "m0", "b", false}))
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(3, 1) {
		t.Errorf("two shares of one device: %+v, want it allocated once", v.DeviceCounts)
	}
	for _, d := range s.NodeDevicesList("n1") {
		if d.ID.Device.String() != "m0" {
			continue
		}
		if q := d.Consumed["memory"]; d.Shares != 2 || q.String() != "2Gi" {
			t.Errorf("m0: %d shares consuming %s memory, want 2 consuming 2Gi", d.Shares, q.String())
		}
	}
	noViolations(t, s)
	s.DeleteResourceClaim(makeClaim("ns", "share1"))
	if v := nodeView(t, s, "n1"); v.Allocated != 1 {
		t.Errorf("one share left: %+v, want the device still allocated", v.DeviceCounts)
	}
	s.DeleteResourceClaim(makeClaim("ns", "share2"))
	if v := nodeView(t, s, "n1"); v.Allocated != 0 || s.AllocatedDevices().Len() != 0 {
		t.Errorf("no share left: %+v, want nothing allocated", v.DeviceCounts)
	}
}

func TestDevices_ClassesMatchWithTheirCELSelectors(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("big", gpu, "big", 1, 1, devs("big", 2), onNode("n1"), withAttr("model", "big")))
	s.AddResourceSlice(makeSlice("small", gpu, "small", 1, 1, devs("small", 3), onNode("n1"), withAttr("model", "small")))
	s.AddDeviceClass(makeClass("big", `device.attributes["gpu.example.com"].model == "big"`))
	s.AddDeviceClass(makeClass("any"))
	s.AddResourceClaim(makeClaim("ns", "c", result{gpu, "big", "big1", "", false}))

	v := nodeView(t, s, "n1")
	if v.ByClass["big"] != counts(2, 1) || v.ByClass["any"] != counts(5, 1) {
		t.Errorf("classes: %+v, want big 2/1, any 5/1", v.ByClass)
	}
	s.UpdateDeviceClass(makeClass("big", `device.attributes["gpu.example.com"].model == "big"`), makeClass("big", `device.attributes["gpu.example.com"].model != "big"`))
	if v := nodeView(t, s, "n1"); v.ByClass["big"] != counts(3, 0) {
		t.Errorf("class reselected: %+v, want the 3 small devices", v.ByClass["big"])
	}
	s.DeleteDeviceClass(makeClass("any"))
	if _, ok := nodeView(t, s, "n1").ByClass["any"]; ok {
		t.Error("deleted class still counted")
	}

	// A selector that does not compile accepts nothing and is reported in the dump.
	s.AddDeviceClass(makeClass("broken", `device.attributes[`))
	if v := nodeView(t, s, "n1"); v.ByClass["broken"].Total != 0 {
		t.Errorf("broken class: %+v, want no device", v.ByClass["broken"])
	}
	d := s.Dump().(devicestore.Dump)
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], "class broken, selector 0") {
		t.Errorf("dump errors %q, want the broken class's selector named", d.Errors)
	}
}

func TestDevices_ViolationsAreReportedNeverNegative(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 1), onNode("n1")))
	s.AddResourceSlice(makeSlice("ghost", gpu, "ghost", 1, 1, devs("g", 1), onNode("ghost")))
	s.AddResourceClaim(makeClaim("ns", "a", result{gpu, "n1", "gpu0", "", false}))
	s.AddResourceClaim(makeClaim("ns", "b", result{gpu, "n1", "gpu0", "", false}, result{gpu, "n1", "nope", "", false}))

	var got []string
	for _, err := range s.CheckInvariants() {
		got = append(got, err.Error())
	}
	slices.Sort(got)
	want := []string{
		"ResourceSlice ghost is for node ghost, which the cache does not know",
		"claims ns/b hold device gpu.example.com/n1/nope, which no ResourceSlice publishes",
		"device gpu.example.com/n1/gpu0 is held by claims ns/a, ns/b: a device not shared is held by one claim at most",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(1, 1) {
		t.Errorf("n1: %+v, want 1 device allocated, 0 free", v.DeviceCounts)
	}
	d := s.Dump().(devicestore.Dump)
	if claims := d.Unpublished["gpu.example.com/n1/nope"]; !slices.Equal(claims, []string{"ns/b"}) {
		t.Errorf("unpublished %v, want nope held by ns/b", d.Unpublished)
	}
	// The dump is the node view under "devices".
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"n1":{"devices":{"total":1,"allocated":1,"free":0,"byClass":{}`) {
		t.Errorf("dump %s, want n1's devices with total, allocated, free, byClass", raw)
	}
	// Releasing more than was taken changes nothing.
	s.DeleteResourceClaim(makeClaim("ns", "a"))
	s.DeleteResourceClaim(makeClaim("ns", "a"))
	s.DeleteResourceClaim(makeClaim("ns", "b"))
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(1, 0) {
		t.Errorf("after releases: %+v, want 1 free", v.DeviceCounts)
	}
}

func TestDevices_SnapshotCopiesOnlyChangedNodes(t *testing.T) {
	s, config := newStoreAndConfig(t)
	s.AddNode(node("n1"))
	s.AddNode(node("n2"))
	s.AddResourceSlice(makeSlice("s1", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	s.AddResourceSlice(makeSlice("s2", gpu, "n2", 1, 1, devs("gpu", 2), onNode("n2")))
	snap := s.NewSnapshot(store.SnapshotOptions{}).(*devicestore.Snapshot)
	s.UpdateSnapshot(snap, 0)
	if v, ok := snap.Get("n1"); !ok || v.Total != 2 || snap.Len() != 2 {
		t.Fatalf("snapshot: %+v %v, len %d", v, ok, snap.Len())
	}
	since := config.Generations().Current()
	s.AddResourceClaim(makeClaim("ns", "c", result{gpu, "n2", "gpu0", "", false}))
	s.UpdateSnapshot(snap, since)
	if v, _ := snap.Get("n2"); v.Allocated != 1 {
		t.Errorf("n2 after a claim: %+v, want 1 allocated", v)
	}
	since = config.Generations().Current()
	s.DeleteResourceSlice(makeSlice("s1", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	s.UpdateSnapshot(snap, since)
	if _, ok := snap.Get("n1"); ok {
		t.Error("n1 lost its only slice and is still in the snapshot")
	}
}

func TestDevices_BadNodeSelectorSelectsNothingAndIsReportedOnce(t *testing.T) {
	s := newStore(t)
	bad := makeSlice("bad", gpu, "bad", 1, 1, devs("gpu", 2), selecting("rack", "a"))
	bad.Spec.NodeSelector.NodeSelectorTerms[0].MatchExpressions[0].Operator = "Near"
	s.AddResourceSlice(bad)
	s.AddResourceSlice(makeSlice("fine", gpu, "fine", 1, 1, devs("gpu", 1), selecting("rack", "a")))
	for _, n := range []string{"n1", "n2", "n3"} {
		s.AddNode(node(n, "rack", "a"))
	}
	if v := nodeView(t, s, "n1"); v.Total != 1 {
		t.Errorf("n1: %+v, want only the parsable pool's device", v)
	}
	d := s.Dump().(devicestore.Dump)
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], "slice bad: node selector") {
		t.Errorf("dump errors %q, want one naming slice bad's node selector", d.Errors)
	}
	noViolations(t, s)
}
