package yield

import (
	"context"
	"io"
	"time"
)

// Pacer rests between the parts of a long loop (a dump, a self-check) so that it works a
// share of the wall time, its duty: after each part it rests as long as it takes to bring
// the time it worked since its last rest down to that share. A loop that keeps a CPU busy
// for a second leaves it, between parts, to the rest of the machine: the loop takes longer,
// the events do not wait for a CPU.
//
// The time worked is wall time less the time spent in the writes through Writer: a loop
// slowed by a busy machine rests longer, one whose client reads slowly does not (a write
// blocked on the client takes no CPU and holds no lock; counted as work, it was rested for
// too). A Pacer is not safe for concurrent use (each loop has its own).
type Pacer struct {
	duty float64
	// now is the clock (time.Now; a test's own).
	now func() time.Time
	// since is when the loop last started working (its start, or the end of its last rest).
	since time.Time
	// writing is the time spent in the writes since then.
	writing time.Duration
}

// NewPacer returns a Pacer whose loop starts working now and works duty (0 to 1) of the
// wall time; at 1 or more it never rests.
func NewPacer(duty float64) *Pacer { return &Pacer{duty: duty, now: time.Now, since: time.Now()} }

// Writer returns w whose writes the pacer does not count as work.
func (p *Pacer) Writer(w io.Writer) io.Writer { return &pacedWriter{w: w, p: p} }

// pacedWriter times the writes to a loop's client.
type pacedWriter struct {
	w io.Writer
	p *Pacer
}

func (w *pacedWriter) Write(b []byte) (int, error) {
	start := w.p.now()
	n, err := w.w.Write(b)
	w.p.writing += w.p.now().Sub(start)
	return n, err
}

// due is how long to rest now: the share of the time worked since the last rest that the
// duty leaves to the rest of the process.
func (p *Pacer) due() time.Duration {
	worked := max(0, p.now().Sub(p.since)-p.writing)
	return time.Duration(float64(worked) * (1 - p.duty) / p.duty)
}

// minRest is the shortest rest: one owed for less is put off until more work adds to it (a
// part of a small cache takes microseconds; a sleep that short only costs a wake-up).
const minRest = time.Millisecond

// Rest sleeps for what the work since the last rest owes, or until ctx is done (its error
// is returned). A rest under a millisecond is put off.
func (p *Pacer) Rest(ctx context.Context) error {
	if p.duty >= 1 {
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
