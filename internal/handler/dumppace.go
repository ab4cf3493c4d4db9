package handler

import (
	"context"
	"time"
)

// dumpDuty is the share of the wall time a dump (WriteDump) works: after each part it rests
// as long as it takes to bring the time it worked since its last rest down to that share.
// A dump at 150,000 pods keeps a CPU busy for over a second; on a machine whose CPUs are all
// taken (bench-e2e's two, shared with the API server and etcd) the event path then waits for
// a CPU while the dump runs: in BenchmarkDumpLag the tail of the label updates' lag was the
// updater's wake-up, not the lock nor the garbage collector. Resting leaves the CPU to the
// rest of the machine between parts: the dump takes longer, the events do not. The time
// worked is wall time: a dump slowed by its client or by a busy machine rests longer.
var dumpDuty = 0.5

// dumpPacer rests between a dump's parts so that it works dumpDuty of the wall time.
type dumpPacer struct {
	// since is when the dump last started working (its start, or the end of its last rest).
	since time.Time
}

func newDumpPacer() *dumpPacer { return &dumpPacer{since: time.Now()} }

// rest sleeps for the share of the time worked since the last rest that dumpDuty leaves to
// the rest of the process, or until ctx is done (its error is returned).
func (p *dumpPacer) rest(ctx context.Context) error {
	if dumpDuty >= 1 {
		return ctx.Err()
	}
	worked := time.Since(p.since)
	t := time.NewTimer(time.Duration(float64(worked) * (1 - dumpDuty) / dumpDuty))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	p.since = time.Now()
	return nil
}
