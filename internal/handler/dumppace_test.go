package handler

import (
	"context"
	"errors"
	"testing"
	"time"
)

// cancellingWriter cancels the request at its first write: the client goes away while the
// dump rests after its first part.
type cancellingWriter struct {
	progressWriter
	cancel context.CancelFunc
}

func (w *cancellingWriter) Write(p []byte) (int, error) {
	w.cancel()
	return w.progressWriter.Write(p)
}

// TestWriteDump_ARequestCancelledWhileTheDumpRestsEndsIt: a dump resting between two parts
// (dumpDuty) ends when its request is cancelled, without waiting for its rest to end nor
// reading another part. The rest here would last days: a dump that slept through the
// cancellation would not return.
func TestWriteDump_ARequestCancelledWhileTheDumpRestsEndsIt(t *testing.T) {
	defer func(d float64) { dumpDuty = d }(dumpDuty)
	dumpDuty = 1e-9
	h, _ := populated(t, 2*nodesPerHold+10, 2*podsPerHold+100)
	parts := 0
	h.afterPart = func() { parts++ }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := h.WriteDump(ctx, &cancellingWriter{cancel: cancel}, DumpIndented); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteDump cancelled during a rest = %v, want %v", err, context.Canceled)
	}
	if parts > 0 {
		t.Errorf("%d parts read after the request was cancelled", parts)
	}
}

// slowClient is a client whose every write blocks for blocked on the pacer's clock.
type slowClient struct {
	clock   *time.Time
	blocked time.Duration
}

func (c slowClient) Write(p []byte) (int, error) {
	*c.clock = c.clock.Add(c.blocked)
	return len(p), nil
}

// TestDumpPacer_TimeBlockedOnTheClientIsNotWork: a part that took a second of its own and
// three seconds blocked writing to a slow client rests as a part of one second does (at
// dumpDuty 0.5, a second); its writes of the next part count from the end of the rest.
func TestDumpPacer_TimeBlockedOnTheClientIsNotWork(t *testing.T) {
	defer func(d float64) { dumpDuty = d }(dumpDuty)
	dumpDuty = 0.5
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := &dumpPacer{now: func() time.Time { return clock }, since: clock}
	w := p.writer(slowClient{clock: &clock, blocked: 1500 * time.Millisecond})

	clock = clock.Add(time.Second) // copying and encoding the part
	for range 2 {
		if _, err := w.Write([]byte("part")); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := p.due(), time.Second; got != want {
		t.Errorf("rest after 1s of work and 3s blocked on the client = %v, want %v", got, want)
	}

	// The rest: what the next part counts starts over.
	p.since, p.writing = clock, 0
	clock = clock.Add(200 * time.Millisecond)
	if got, want := p.due(), 200*time.Millisecond; got != want {
		t.Errorf("rest after the next part's 200ms = %v, want %v", got, want)
	}
}

// TestDumpPacer_ARestUnderTheMinimumIsPutOff: a part that owes less than minRest does not
// rest; its work counts toward the next part's rest.
func TestDumpPacer_ARestUnderTheMinimumIsPutOff(t *testing.T) {
	defer func(d float64) { dumpDuty = d }(dumpDuty)
	dumpDuty = 0.5
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	start := clock
	p := &dumpPacer{now: func() time.Time { return clock }, since: clock}
	clock = clock.Add(minRest / 2)
	if err := p.rest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !p.since.Equal(start) {
		t.Errorf("a part owing %v rested (its work starts over at %v), want it put off", minRest/2, p.since.Sub(start))
	}
	clock = clock.Add(minRest / 2)
	if got, want := p.due(), minRest; got != want {
		t.Errorf("owed after two parts of %v = %v, want %v", minRest/2, got, want)
	}
}
