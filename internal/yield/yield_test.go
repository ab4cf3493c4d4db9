package yield

import (
	"testing"
	"time"
)

// TestYielder_YieldsOnceEachInterval: on a clock that moves a fortieth of Interval a step
// (0.4 Interval between two reads of the clock), the loop yields at the first read Interval
// or more after its first read, then at the first read Interval or more after each yield:
// every third read.
func TestYielder_YieldsOnceEachInterval(t *testing.T) {
	clock := time.Unix(0, 0)
	yields := 0
	defer func(n func() time.Time, g func()) { now, gosched = n, g }(now, gosched)
	now = func() time.Time { return clock }
	gosched = func() { yields++ }

	var y Yielder
	var at []int
	for step := 1; step <= 100*checkEvery; step++ {
		clock = clock.Add(Interval / 40)
		before := yields
		y.Step()
		if yields != before {
			at = append(at, step)
		}
	}
	if len(at) == 0 || at[0] != 4*checkEvery {
		t.Fatalf("yields at steps %v, want the first at %d", at, 4*checkEvery)
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] != 3*checkEvery {
			t.Fatalf("yields at steps %v, want one every %d steps", at, 3*checkEvery)
		}
	}
	if want := (100-4)/3 + 1; len(at) != want {
		t.Errorf("%d yields in %d steps, want %d", len(at), 100*checkEvery, want)
	}
}

// TestYielder_ZeroValueIsReady: a loop shorter than Interval never yields, nor one whose
// interval starts again (Reset) before it ends.
func TestYielder_ZeroValueIsReady(t *testing.T) {
	clock := time.Unix(0, 0)
	defer func(n func() time.Time, g func()) { now, gosched = n, g }(now, gosched)
	now = func() time.Time { return clock }
	gosched = func() { t.Fatal("yielded in a loop shorter than Interval") }
	var y Yielder
	for range 10 * checkEvery {
		clock = clock.Add(Interval / (20 * checkEvery))
		y.Step()
	}
	clock = clock.Add(Interval)
	y.Reset()
	for range 10 * checkEvery {
		y.Step()
	}
}
