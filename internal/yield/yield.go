// Package yield lets a long loop on a goroutine of its own (a dump, a self-check) give its
// processor to the goroutines waiting behind it.
//
// Go preempts a goroutine that runs on for 10 ms, and no sooner: until then, goroutines made
// runnable on the same P (an informer's event handed from the watch's reader to the
// reflector, a metrics read) and the P's timers wait, unless another P is idle. While the
// collector marks, its idle workers take the other P and look only at their own queue. On
// two CPUs a dump or a verify pass therefore delayed events by up to 10 ms at a time
// (BenchmarkDumpLag's "wake"). runtime.Gosched every Interval bounds that wait.
//
// A Pacer goes further: between the loop's parts it rests, leaving the CPU to the rest of
// the machine a share of the wall time.
package yield

import (
	"runtime"
	"time"
)

// Interval is how long a loop works before it yields: short against the 10 ms preemption,
// long against a yield's cost (about a microsecond with nothing waiting).
const Interval = 250 * time.Microsecond

// checkEvery is how many steps pass between two reads of the clock.
const checkEvery = 16

// now and gosched are time.Now and runtime.Gosched (a test's own).
var (
	now     = time.Now
	gosched = runtime.Gosched
)

// Yielder yields every Interval of a loop's steps. Its zero value is ready; it is not safe
// for concurrent use (each loop has its own).
type Yielder struct {
	steps int
	last  time.Time
}

// Reset starts the interval again, after the loop gave its P away otherwise (a sleep).
func (y *Yielder) Reset() { y.last = time.Time{} }

// Step counts one step of the loop, and yields when Interval has passed since the last
// yield (or the first step).
func (y *Yielder) Step() {
	y.steps++
	if y.steps%checkEvery != 0 {
		return
	}
	t := now()
	switch {
	case y.last.IsZero():
		y.last = t
	case t.Sub(y.last) >= Interval:
		gosched()
		y.last = now()
	}
}
