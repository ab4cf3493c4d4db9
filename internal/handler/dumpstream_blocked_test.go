package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// blockingWriter stops every write until the test lets it go: a client that reads slowly.
type blockingWriter struct {
	bytes.Buffer
	blocked chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	w.blocked <- struct{}{}
	<-w.release
	return n, err
}

// TestWriteDump_AClientThatStopsReadingKeepsNoEventWaiting: while the dump waits on its
// client (every write blocked in turn), the cache's lock is free and events apply: the
// dump copies a part under the lock and writes it after, never the other way round.
func TestWriteDump_AClientThatStopsReadingKeepsNoEventWaiting(t *testing.T) {
	h, _ := populated(t, 2*nodesPerHold+10, 2*podsPerHold+100)
	w := &blockingWriter{blocked: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- h.WriteDump(context.Background(), w, DumpIndented) }()

	var late []*corev1.Pod
	for finished := false; !finished; {
		select {
		case <-w.blocked:
			if !h.mu.TryLock() {
				// An event would wait for the client: not applied (it would deadlock here).
				t.Errorf("write %d: the cache's lock is held while the dump waits on its client", len(late)+1)
				w.release <- struct{}{}
				continue
			}
			h.mu.Unlock()
			p := ts.MakePod("ns", fmt.Sprintf("late-%03d", len(late)), ts.OnNode("n-0000"), ts.Requests("100m", "128Mi"))
			must(t, h.Add(p))
			late = append(late, p)
			w.release <- struct{}{}
		case err := <-done:
			must(t, err)
			finished = true
		}
	}
	if want := 2 + 2; len(late) < want {
		t.Errorf("the dump wrote %d times, want at least %d (two parts of nodes and two of pods): not streamed", len(late), want)
	}
	for _, p := range late {
		if _, err := h.GetPod(p); err != nil {
			t.Errorf("pod %s added while the dump waited on its client: %v", p.Name, err)
		}
	}
	if !json.Valid(w.Bytes()) {
		t.Error("the dump written under events is not JSON")
	}
	checkInvariants(t, h)
}
