package devicestore_test

import "testing"

// TestDevices_ADeviceInTwoGenerationsOnTwoNodesFollowsItsClasses: a pool whose newest
// generation reaches n1 and whose older, complete one still reaches n2 names gpu0 in both,
// with other attributes: each node counts its own version in the classes that accept it;
// a class changed afterwards reaches both versions; the cluster counts the device once, in
// every class some version of it is in.
func TestDevices_ADeviceInTwoGenerationsOnTwoNodesFollowsItsClasses(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddNode(node("n2"))
	s.AddResourceSlice(makeSlice("new", gpu, "p", 2, 1, []string{"gpu0"}, onNode("n1"), withAttr("model", "big")))
	s.AddResourceSlice(makeSlice("old", gpu, "p", 1, 1, []string{"gpu0"}, onNode("n2"), withAttr("model", "small")))
	big := makeClass("big", `device.attributes["gpu.example.com"].model == "big"`)
	s.AddDeviceClass(big)
	if n1, n2 := nodeView(t, s, "n1").ByClass["big"], nodeView(t, s, "n2").ByClass["big"]; n1 != counts(1, 0) || n2 != counts(0, 0) {
		t.Errorf("class big: n1 %+v, n2 %+v; want gpu0 on n1 only (n2 counts the small one)", n1, n2)
	}
	changed := makeClass("big", `true`)
	s.UpdateDeviceClass(big, changed)
	if n1, n2 := nodeView(t, s, "n1").ByClass["big"], nodeView(t, s, "n2").ByClass["big"]; n1 != counts(1, 0) || n2 != counts(1, 0) {
		t.Errorf("class big changed to accept all: n1 %+v, n2 %+v; want gpu0 on both", n1, n2)
	}
	s.UpdateDeviceClass(changed, makeClass("big", `device.attributes["gpu.example.com"].model == "small"`))
	if n1, n2 := nodeView(t, s, "n1").ByClass["big"], nodeView(t, s, "n2").ByClass["big"]; n1 != counts(0, 0) || n2 != counts(1, 0) {
		t.Errorf("class big changed to the small one: n1 %+v, n2 %+v; want gpu0 on n2 only", n1, n2)
	}
	s.AddResourceClaim(makeClaim("ns", "c", result{gpu, "p", "gpu0", "", false}))
	if all, byClass := s.ClusterCounts(); all != counts(1, 1) || byClass["big"] != counts(1, 1) {
		t.Errorf("cluster: %+v, class big %+v; want gpu0 once, allocated, in class big", all, byClass["big"])
	}
	noViolations(t, s)
}
