package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// ProfileColdStart starts a fresh process of s and records a CPU profile of its first
// seconds (from when its profiler answers, a few milliseconds after the start) into
// dir/cpu-<subject>.pb.gz, and one of the API server over the same seconds (from just
// before the start) into dir/apiserver-cpu-<subject>.pb.gz when env.API is set. It is not
// a sample: the profilers cost a little CPU.
func ProfileColdStart(ctx context.Context, s Subject, env Env, timing Timing, seconds int, dir string) error {
	logPath := filepath.Join(dir, s.Name+"-cpuprofile.log")
	apiProfile := make(chan error, 1)
	if env.API != nil {
		go func() {
			body, err := env.API.CPUProfile(ctx, seconds)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "apiserver-cpu-"+s.Name+".pb.gz"), body, 0o644)
			}
			apiProfile <- err
		}()
	} else {
		apiProfile <- nil
	}
	if err := profileSubject(ctx, s, env, timing, seconds, dir, logPath); err != nil {
		<-apiProfile
		return err
	}
	if err := <-apiProfile; err != nil {
		return fmt.Errorf("the API server's CPU profile during %s's start: %w", s.Name, err)
	}
	return nil
}

func profileSubject(ctx context.Context, s Subject, env Env, timing Timing, seconds int, dir, logPath string) error {
	in, err := s.Start(env, logPath)
	if err != nil {
		return err
	}
	defer in.Stop(10 * time.Second)
	url := fmt.Sprintf("%s/profile?seconds=%d", in.PprofURL, seconds)
	deadline := time.Now().Add(timing.Timeout)
	for {
		body, err := harness.Get(ctx, url, time.Duration(seconds)*time.Second+harness.RequestTimeout)
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
