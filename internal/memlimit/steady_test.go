package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestSteady_SetsTheGCPercentUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	if !Steady(37) {
		t.Fatal("Steady(37) did nothing without GOGC")
	}
	if got := debug.SetGCPercent(100); got != 37 {
		t.Errorf("GC percent %d after Steady(37)", got)
	}
	if Steady(0) {
		t.Error("Steady(0) changed the collector: 0 keeps GOGC")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after Steady(0), want it untouched (100)", got)
	}

	t.Setenv("GOGC", "200")
	if Steady(37) {
		t.Error("Steady(37) overrode GOGC=200")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it untouched", got)
	}
}
