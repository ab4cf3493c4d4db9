package multicache

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// TestQuietStartup_ControllerStartMessagesGoToDebug: with --local, controller-runtime's
// per-controller start messages are shown only at debug level; every other line as it is.
func TestQuietStartup_ControllerStartMessagesGoToDebug(t *testing.T) {
	for _, verbosity := range []int{0, 1} {
		var got []string
		sink := funcr.New(func(_, args string) { got = append(got, args) }, funcr.Options{Verbosity: verbosity}).GetSink()
		log := logr.New(quietStartup{sink}).WithName("controller").WithValues("controller", "pod-feed")
		log.Info("Starting EventSource", "source", "func source: 0x2039b00")
		log.Info("Starting Controller")
		log.Info("Starting workers", "worker count", 1)
		log.Info("cache caught up")
		want := 1
		if verbosity == 1 {
			want = 4
		}
		if len(got) != want {
			t.Errorf("verbosity %d: %d lines logged, want %d: %v", verbosity, len(got), want, got)
		}
	}
}
