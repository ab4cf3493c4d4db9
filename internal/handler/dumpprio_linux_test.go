package handler

import (
	"context"
	"syscall"
	"testing"
)

// niceWriter records the nice value of the thread each write runs on.
type niceWriter struct {
	progressWriter
	nices map[int]bool
	err   error
}

func (w *niceWriter) Write(p []byte) (int, error) {
	// The raw getpriority(2) answers 20 - nice.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil && w.err == nil {
		w.err = err
	}
	w.nices[20-prio] = true
	return w.progressWriter.Write(p)
}

// TestWriteDump_RunsAtTheLowestPriority: every part of a dump is written from a thread at
// nice 19, and the thread that asked for it is left at its own priority.
func TestWriteDump_RunsAtTheLowestPriority(t *testing.T) {
	h, _ := populated(t, 2*nodesPerHold+10, 2*podsPerHold+100)
	w := &niceWriter{nices: map[int]bool{}}
	before, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	must(t, err)
	must(t, h.WriteDump(context.Background(), w))
	must(t, w.err)
	if len(w.nices) != 1 || !w.nices[dumpNice] {
		t.Errorf("the dump was written at nice %v, want only %d", w.nices, dumpNice)
	}
	if after, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err != nil || after != before {
		t.Errorf("the process's priority went from %d to %d (%v): the dump's nice leaked", 20-before, 20-after, err)
	}
}

// TestWriteDump_APanicReachesTheCaller: a panic while the dump runs on its own thread is
// raised in the caller's goroutine, where the HTTP server recovers it, not in a goroutine
// that would end the process.
func TestWriteDump_APanicReachesTheCaller(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the dump's panic", r)
		}
	}()
	_ = atLowPriority(func() error { panic("boom") })
	t.Error("atLowPriority returned after a panic")
}
