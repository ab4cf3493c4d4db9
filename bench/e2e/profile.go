package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ProfileColdStart starts a fresh process of s and records a CPU profile of its first
// seconds (from when its profiler answers, a few milliseconds after the start) into
// dir/cpu-<subject>.pb.gz. It is not a sample: the profiler costs a little CPU.
func ProfileColdStart(ctx context.Context, s Subject, env Env, timing Timing, seconds int, dir string) error {
	logPath := filepath.Join(dir, s.Name+"-cpuprofile.log")
	in, err := s.Start(env, logPath)
	if err != nil {
		return err
	}
	defer in.Stop(10 * time.Second)
	url := fmt.Sprintf("%s/profile?seconds=%d", in.PprofURL, seconds)
	deadline := time.Now().Add(timing.Timeout)
	for {
		body, err := getSlow(ctx, url, time.Duration(seconds)*time.Second+requestTimeout)
		if err == nil {
			return os.WriteFile(filepath.Join(dir, "cpu-"+s.Name+".pb.gz"), body, 0o644)
		}
		if exited, _ := in.Exited(); exited || time.Now().After(deadline) {
			return fmt.Errorf("%s: CPU profile: %w; log:\n%s", s.Name, err, logTail(logPath, 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
