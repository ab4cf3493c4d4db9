package handler

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func invariantViolations(t *testing.T) float64 {
	t.Helper()
	return counterValue(t, metrics.InvariantViolationsTotal)
}

// The verify loop's check (Handler.CheckInvariants) reports and counts each of the three
// bad inputs of the devices, fed as events: a claim allocated a device no slice publishes,
// two claims holding one dedicated device, a slice for a node the cache does not know. The
// counts stay whole; when the inputs go, so do the findings.
func TestDevices_TheSelfCheckReportsAndCountsBadInputs(t *testing.T) {
	h := claimsWorld(t) // n1 publishes gpu0..gpu3
	ghost := draSlice("ghost", "no-such-node", "g0")
	unpublished := draClaim("unpublished", "n1", "gpu9")
	first, second := draClaim("first", "n1", "gpu0"), draClaim("second", "n1", "gpu0")
	for _, c := range []func() error{
		func() error { return h.Add(ghost) },
		func() error { return h.Add(unpublished) },
		func() error { return h.Add(first) },
		func() error { return h.Add(second) },
	} {
		must(t, c())
	}

	before := invariantViolations(t)
	got := errorSet(h.CheckInvariants())
	want := []string{
		"devices: ResourceSlice ghost is for node no-such-node, which the cache does not know",
		"devices: claims ns/unpublished hold device gpu.example.com/n1/gpu9, which no ResourceSlice publishes",
		"devices: device gpu.example.com/n1/gpu0 is held by claims ns/first, ns/second: a device not shared is held by one claim at most",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := invariantViolations(t) - before; d != 3 {
		t.Errorf("multicache_invariant_violations_total grew by %v, want 3", d)
	}
	if v := deviceView(t, h, "n1"); v.DeviceCounts != (store.DeviceCounts{Total: 4, Allocated: 1, Free: 3}) {
		t.Errorf("n1: %+v, want 4 total, gpu0 allocated once, 3 free", v.DeviceCounts)
	}
	if v := deviceView(t, h, "no-such-node"); v.Total != 1 || v.Free != 1 {
		t.Errorf("the unknown node's slice: %+v, want its device counted under its name", v.DeviceCounts)
	}

	must(t, h.Delete(second))
	must(t, h.Delete(unpublished))
	must(t, h.Delete(ghost))
	checkInvariants(t, h)
	if v := deviceView(t, h, "n1"); v.DeviceCounts != (store.DeviceCounts{Total: 4, Allocated: 1, Free: 3}) {
		t.Errorf("n1 after the bad inputs went: %+v", v.DeviceCounts)
	}
}

// A store marking a claim assumed that the handler has not assumed (or the reverse) is a
// finding of the same check.
func TestDevices_TheSelfCheckComparesTheAssumedClaims(t *testing.T) {
	h := claimsWorld(t)
	must(t, h.AssumeClaim(atVersion(draClaim("c", "n1", "gpu1"), "1")))
	checkInvariants(t, h)
	h.ReadStore(stores.DeviceStoreName, func(s store.Store) {
		s.(*devicestore.Store).AssumeResourceClaim(nil, draClaim("stray", "n1", "gpu2"))
		s.(*devicestore.Store).UpdateResourceClaim(draClaim("c", "n1", "gpu1"), draClaim("c", "n1", "gpu1"))
	})
	got := errorSet(h.CheckInvariants())
	want := []string{
		"claim ns/c is assumed, but the devices store does not mark it",
		"the devices store marks claim ns/stray assumed, but no scheduler's assumption stands",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
