package freecapacity

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func TestWatcher_ReportsNodesUnderTheThresholdAndFollowsChanges(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for _, n := range []string{"busy", "idle"} {
		if err := h.Add(ts.MakeNode(n, "10", "10Gi")); err != nil {
			t.Fatal(err)
		}
	}
	busy := ts.MakePod("ns", "big", ts.OnNode("busy"), ts.Requests("9500m", "1Gi"))
	if err := h.Add(busy); err != nil {
		t.Fatal(err)
	}
	w := New(h, 0.1, time.Minute, logr.Discard())
	if got := w.Scan(); !slices.Equal(got, []string{"busy"}) {
		t.Fatalf("low nodes %v, want [busy]", got)
	}
	if err := h.Delete(busy); err != nil {
		t.Fatal(err)
	}
	if got := w.Scan(); len(got) != 0 {
		t.Errorf("low nodes after the pod went: %v", got)
	}
}
