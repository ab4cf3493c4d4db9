package multicache

import (
	"context"
	"runtime/debug"
	"testing"
	"time"
)

// TestEmbedded_SetsTheSteadyGCPercentOnceCaughtUp: a component that embeds the cache (the
// multicache scheduler) gets the collector multicache's binary runs with: once the cache
// caught up, --steady-gogc (default 50); 0 keeps the process's, and so does a set GOGC.
func TestEmbedded_SetsTheSteadyGCPercentOnceCaughtUp(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	percent := gcPercent
	for _, tc := range []struct {
		name, gogc string
		flags      []string
		want       int
	}{
		{"default", "", nil, 50},
		{"--steady-gogc=70", "", []string{"--steady-gogc=70"}, 70},
		{"--steady-gogc=0 keeps it", "", []string{"--steady-gogc=0"}, 100},
		{"GOGC set wins", "100", nil, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			debug.SetGCPercent(100)
			opts, err := NewCommand().Options(append([]string{"--leader-elect=false", "--metrics-bind-address=0",
				"--health-probe-bind-address=0", "--debug-bind-address=0"}, tc.flags...))
			if err != nil {
				t.Fatal(err)
			}
			opts.SetSkipControllerNameValidation(true)
			op, err := NewEmbedded(env.Config, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- op.Start(ctx) }()
			defer func() {
				cancel()
				<-done
			}()
			deadline := time.Now().Add(30 * time.Second)
			for !op.Ready() || (percent() != tc.want && time.Now().Before(deadline)) {
				if time.Now().After(deadline) {
					t.Fatal("the embedded cache did not catch up")
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // a switch comes right after the catch-up
			if got := percent(); got != tc.want {
				t.Errorf("GC percent %d once caught up, want %d", got, tc.want)
			}
		})
	}
}
