package handler

import (
	"context"
	"io"
	"time"
)

// dumpDuty is the share of the wall time a dump (WriteDump) works: after each part it rests
// as long as it takes to bring the time it worked since its last rest down to that share.
// A dump at 150,000 pods keeps a CPU busy for over a second; on a machine whose CPUs are all
// taken (bench-e2e's two, shared with the API server and etcd) the event path then waits for
// a CPU while the dump runs: in BenchmarkDumpLag the tail of the label updates' lag was the
// updater's wake-up, not the lock nor the garbage collector. Resting leaves the CPU to the
// rest of the machine between parts: the dump takes longer, the events do not.
//
// The time worked is wall time less the time spent in the client's writes: a dump slowed
// by a busy machine rests longer, one whose client reads slowly does not (a write blocked
// on the client takes no CPU and holds no lock; counted as work, it was rested for too).
// BenchmarkDumpLag's "http-slow" (a client at 16 MiB/s) completed as many dumps either
// way, the client's pace bounding both, with no change of the lag beyond the noise.
var dumpDuty = 0.5

// dumpPacer rests between a dump's parts so that it works dumpDuty of the wall time; the
// invariant check's parts rest the same way.
type dumpPacer struct {
	// now is the clock (time.Now; a test's own).
	now func() time.Time
	// since is when the dump last started working (its start, or the end of its last rest).
	since time.Time
	// writing is the time spent in the client's writes since then.
	writing time.Duration
}

func newDumpPacer() *dumpPacer { return &dumpPacer{now: time.Now, since: time.Now()} }

// writer returns w whose writes the pacer does not count as work.
func (p *dumpPacer) writer(w io.Writer) io.Writer { return &pacedWriter{w: w, p: p} }

// pacedWriter times the writes to a dump's client.
type pacedWriter struct {
	w io.Writer
	p *dumpPacer
}

func (w *pacedWriter) Write(b []byte) (int, error) {
	start := w.p.now()
	n, err := w.w.Write(b)
	w.p.writing += w.p.now().Sub(start)
	return n, err
}

// due is how long to rest now: the share of the time worked since the last rest that
// dumpDuty leaves to the rest of the process.
func (p *dumpPacer) due() time.Duration {
	worked := max(0, p.now().Sub(p.since)-p.writing)
	return time.Duration(float64(worked) * (1 - dumpDuty) / dumpDuty)
}

// minRest is the shortest rest: one owed for less is put off until more work adds to it (a
// part of a small cache takes microseconds; a sleep that short only costs a wake-up).
const minRest = time.Millisecond

// rest sleeps for due, or until ctx is done (its error is returned). A rest under minRest
// is put off.
func (p *dumpPacer) rest(ctx context.Context) error {
	if dumpDuty >= 1 {
		return ctx.Err()
	}
	due := p.due()
	if due < minRest {
		return ctx.Err()
	}
	t := time.NewTimer(due)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	p.since, p.writing = p.now(), 0
	return nil
}
