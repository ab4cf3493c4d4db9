package handler

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func TestRegistry_FanOutOrderIsFixedWithThePodStoreLast(t *testing.T) {
	h, _ := newHandler(t)
	if got := h.StoreNames(); !slices.Equal(got, stores.FanOutOrder) || got[len(got)-1] != stores.PodStoreName {
		t.Errorf("stores %v, want %v ending with pods", got, stores.FanOutOrder)
	}
}

func TestRegistry_DisabledStoresAreNotBuiltAndTheirKindsNotWatched(t *testing.T) {
	h, _ := newHandler(t, func(c *stores.Config) { c.EnabledStores = []stores.Name{stores.PodGroupStoreName} })
	if got := h.StoreNames(); !slices.Equal(got, []stores.Name{stores.NodeStoreName, stores.PodGroupStoreName, stores.PodStoreName}) {
		t.Errorf("stores %v: required stores must be added, others left out", got)
	}
	kinds := h.WatchedKinds()
	for _, k := range []stores.Kind{stores.KindPod, stores.KindNode, stores.KindNMNode, stores.KindCNR, stores.KindPodGroup} {
		if !slices.Contains(kinds, k) {
			t.Errorf("kind %s not watched", k)
		}
	}
	for _, k := range []stores.Kind{stores.KindPDB, stores.KindOwner, stores.KindMovement, stores.KindReservation} {
		if slices.Contains(kinds, k) {
			t.Errorf("kind %s watched although no enabled store handles it", k)
		}
	}
	// Events of unwatched kinds still validate, and reach no store.
	must(t, h.Add(ts.MakeReservation("ns", "r", "n1", "1", "1Gi")))
	if _, ok := h.Reservation(rsvKey); ok {
		t.Error("a disabled store answered")
	}
	if info, ok := h.NodeInfo("n1"); ok {
		t.Errorf("a reservation was charged without the reservation store: %+v", info)
	}
	if got := dumpJSON(t, h); !strings.Contains(got, `"reservations":{}`) {
		t.Errorf("dump of a disabled store is not empty: %s", got)
	}
}
