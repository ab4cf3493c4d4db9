package handler

import (
	"context"
	"errors"
	"testing"
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
