package devicestore_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// An assumed allocation counts at once, marked on the node, the class, the pool, the device
// and in the dump; the API's claim replacing it ends the mark, counted once; a snapshot
// follows both.
func TestAssume_CountsAtOnceMarkedUntilTheAPIsClaimReplacesIt(t *testing.T) {
	s, config := newStoreAndConfig(t)
	s.AddNode(node("n1"))
	s.AddDeviceClass(makeClass("gpus"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 4), onNode("n1")))
	snap := s.NewSnapshot(store.SnapshotOptions{}).(*devicestore.Snapshot)
	s.UpdateSnapshot(snap, 0)
	since := config.Generations().Current()

	assumed := makeClaim("ns", "c", result{gpu, "n1", "gpu0", "", false}, result{gpu, "n1", "gpu1", "", false})
	if err := s.CheckAssumeResourceClaim(assumed); err != nil {
		t.Fatal(err)
	}
	s.AssumeResourceClaim(nil, assumed)
	want := store.DeviceCounts{Total: 4, Allocated: 2, Free: 2, Assumed: 2}
	v := nodeView(t, s, "n1")
	if v.DeviceCounts != want || v.ByClass["gpus"] != want || v.ByPool[gpu+"/n1"].DeviceCounts != want {
		t.Errorf("assumed: node %+v, class %+v, pool %+v; want %+v", v.DeviceCounts, v.ByClass["gpus"], v.ByPool[gpu+"/n1"].DeviceCounts, want)
	}
	for _, d := range s.NodeDevicesList("n1") {
		if held := d.ID.Device.String() < "gpu2"; d.Allocated != held || d.Assumed != held {
			t.Errorf("%s: allocated %v, assumed %v; want both %v", d.ID, d.Allocated, d.Assumed, held)
		}
	}
	if all, _ := s.ClusterCounts(); all != want {
		t.Errorf("cluster counts %+v, want %+v", all, want)
	}
	if d := s.Dump().(devicestore.Dump); !slices.Equal(d.Assumed["ns/c"], []string{gpu + "/n1/gpu0", gpu + "/n1/gpu1"}) {
		t.Errorf("dump's assumed claims %v, want ns/c with gpu0 and gpu1", d.Assumed)
	}
	s.UpdateSnapshot(snap, since)
	if got, _ := snap.Get("n1"); got.DeviceCounts != want {
		t.Errorf("snapshot after the assumption: %+v, want %+v", got.DeviceCounts, want)
	}
	noViolations(t, s)

	since = config.Generations().Current()
	api := makeClaim("ns", "c", result{gpu, "n1", "gpu0", "", false}, result{gpu, "n1", "gpu1", "", false})
	s.UpdateResourceClaim(assumed, api)
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(4, 2) {
		t.Errorf("the API's claim, same allocation: %+v, want 2 allocated, none assumed", v.DeviceCounts)
	}
	if d := s.Dump().(devicestore.Dump); d.Assumed != nil {
		t.Errorf("dump's assumed claims %v after the API's claim, want none", d.Assumed)
	}
	s.UpdateSnapshot(snap, since)
	if got, _ := snap.Get("n1"); got.DeviceCounts != counts(4, 2) {
		t.Errorf("snapshot after the API's claim: %+v, want the mark gone (the node copied again)", got.DeviceCounts)
	}
}

func TestAssume_ADeviceAnotherClaimHoldsIsRefused(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 2), onNode("n1")))
	s.AddResourceSlice(makeSlice("m", "mem.example.com", "n1", 1, 1, devs("m", 1), onNode("n1"), multiAlloc()))
	s.AssumeResourceClaim(nil, makeClaim("ns", "a", result{gpu, "n1", "gpu0", "", false}))
	s.AddResourceClaim(makeClaim("ns", "shared", result{"mem.example.com", "n1", "m0", "x", false}))

	for _, tc := range []struct {
		name  string
		res   result
		owner string
	}{
		{"a device another claim assumed", result{gpu, "n1", "gpu0", "", false}, "ns/a (assumed)"},
		{"alone, a device shared by another claim", result{"mem.example.com", "n1", "m0", "", false}, "ns/shared"},
		{"a share under another claim's share ID", result{"mem.example.com", "n1", "m0", "x", false}, "ns/shared"},
		{"a share of a device another claim holds alone", result{gpu, "n1", "gpu0", "y", false}, "ns/a (assumed)"},
	} {
		err := s.CheckAssumeResourceClaim(makeClaim("ns", "b", result{gpu, "n1", "gpu1", "", false}, tc.res))
		if !errors.Is(err, store.ErrDeviceInUse) || !strings.Contains(err.Error(), "which claim "+tc.owner+" holds") {
			t.Errorf("%s: %v, want ErrDeviceInUse naming %s", tc.name, err, tc.owner)
		}
	}
	for name, c := range map[string]result{
		"another share of a shared device":      {"mem.example.com", "n1", "m0", "y", false},
		"the claim's own device, assumed again": {gpu, "n1", "gpu0", "", false},
		"a free device":                         {gpu, "n1", "gpu1", "", false},
		"a device no slice publishes":           {gpu, "n1", "gpu9", "", false},
	} {
		claim := "b"
		if name == "the claim's own device, assumed again" {
			claim = "a"
		}
		if err := s.CheckAssumeResourceClaim(makeClaim("ns", claim, c)); err != nil {
			t.Errorf("%s: %v, want no conflict", name, err)
		}
	}
	if v := nodeView(t, s, "n1"); v.DeviceCounts != (store.DeviceCounts{Total: 3, Allocated: 2, Free: 1, Assumed: 1}) {
		t.Errorf("checks changed the counts: %+v", v.DeviceCounts)
	}
}

// Assumed again (pending, then the claim the API returned), the allocation replaces the
// previous one; deleted, nothing is left, never a negative count.
func TestAssume_AgainReplacesAndDeleteReleases(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 4), onNode("n1")))
	first := makeClaim("ns", "c", result{gpu, "n1", "gpu0", "", false})
	second := makeClaim("ns", "c", result{gpu, "n1", "gpu1", "", false}, result{gpu, "n1", "gpu2", "", false})
	s.AssumeResourceClaim(nil, first)
	s.AssumeResourceClaim(first, second)
	if v := nodeView(t, s, "n1"); v.DeviceCounts != (store.DeviceCounts{Total: 4, Allocated: 2, Free: 2, Assumed: 2}) {
		t.Errorf("assumed again: %+v, want the second allocation only", v.DeviceCounts)
	}
	s.DeleteResourceClaim(second)
	s.DeleteResourceClaim(second)
	if v := nodeView(t, s, "n1"); v.DeviceCounts != counts(4, 0) || s.AllocatedDevices().Len() != 0 {
		t.Errorf("deleted: %+v, want nothing allocated", v.DeviceCounts)
	}
	if d := s.Dump().(devicestore.Dump); d.Assumed != nil {
		t.Errorf("dump's assumed claims %v, want none", d.Assumed)
	}
	noViolations(t, s)
}

// A finding about an assumed claim says it is one.
func TestAssume_FindingsMarkTheAssumedClaims(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 1), onNode("n1")))
	s.AddResourceClaim(makeClaim("ns", "api", result{gpu, "n1", "gpu0", "", false}))
	s.AssumeResourceClaim(nil, makeClaim("ns", "assumed", result{gpu, "n1", "gpu0", "", false}, result{gpu, "n1", "nope", "", false}))
	var got []string
	for _, err := range s.CheckInvariants() {
		got = append(got, err.Error())
	}
	slices.Sort(got)
	want := []string{
		"claims ns/assumed (assumed) hold device gpu.example.com/n1/nope, which no ResourceSlice publishes",
		"device gpu.example.com/n1/gpu0 is held by claims ns/api, ns/assumed (assumed): a device not shared is held by one claim at most",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := s.Dump().(devicestore.Dump); !slices.Equal(d.Unpublished[gpu+"/n1/nope"], []string{"ns/assumed (assumed)"}) {
		t.Errorf("dump's unpublished devices %v, want nope held by ns/assumed (assumed)", d.Unpublished)
	}
	if v := nodeView(t, s, "n1"); v.DeviceCounts != (store.DeviceCounts{Total: 1, Allocated: 1, Assumed: 1}) {
		t.Errorf("n1: %+v, want gpu0 allocated once, assumed", v.DeviceCounts)
	}
}
