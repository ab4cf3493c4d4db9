package yield

import (
	"context"
	"testing"
	"time"
)

// slowClient is a client whose every write blocks for blocked on the pacer's clock.
type slowClient struct {
	clock   *time.Time
	blocked time.Duration
}

func (c slowClient) Write(p []byte) (int, error) {
	*c.clock = c.clock.Add(c.blocked)
	return len(p), nil
}

// TestPacer_TimeBlockedOnTheClientIsNotWork: a part that took a second of its own and
// three seconds blocked writing to a slow client rests as a part of one second does (at
// duty 0.5, a second); its writes of the next part count from the end of the rest.
func TestPacer_TimeBlockedOnTheClientIsNotWork(t *testing.T) {
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := &Pacer{duty: 0.5, now: func() time.Time { return clock }, since: clock}
	w := p.Writer(slowClient{clock: &clock, blocked: 1500 * time.Millisecond})

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

// TestPacer_ARestUnderTheMinimumIsPutOff: a part that owes less than minRest does not
// rest; its work counts toward the next part's rest.
func TestPacer_ARestUnderTheMinimumIsPutOff(t *testing.T) {
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	start := clock
	p := &Pacer{duty: 0.5, now: func() time.Time { return clock }, since: clock}
	clock = clock.Add(minRest / 2)
	if err := p.Rest(context.Background()); err != nil {
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

// TestPacer_AtFullDutyNeverRests: at duty 1 a part that worked an hour returns at once.
func TestPacer_AtFullDutyNeverRests(t *testing.T) {
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := &Pacer{duty: 1, now: func() time.Time { return clock }, since: clock}
	clock = clock.Add(time.Hour)
	done := make(chan error, 1)
	go func() { done <- p.Rest(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pacer at duty 1 rested")
	}
}
