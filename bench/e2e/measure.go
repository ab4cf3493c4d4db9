package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// ColdStart is one cold start of one subject.
type ColdStart struct {
	Subject string
	Round   int
	// Full is the time from the start of the process to the first poll that found every
	// object in its metrics.
	Full time.Duration
	// CPU is the CPU time (user and system) the process used until then.
	CPU time.Duration
	// RSSAtFull is the resident set when it was found full.
	RSSAtFull int64
	// PeakRSS (VmHWM) and SettledRSS (VmRSS) are read Settle after it was full.
	PeakRSS, SettledRSS int64
	// HeapAfterGC is the Go heap in use right after a forced collection, read after the
	// settled RSS (the collection may shrink the RSS).
	HeapAfterGC int64
	// Detail is the counts of the last poll.
	Detail string
	// API is what the start cost the API server and etcd until full (nil when the
	// environment has no APIServer to read).
	API *APICost
}

// Timing of a cold start.
type Timing struct {
	// Poll is how often the subject's metrics are read until it is full.
	Poll time.Duration
	// Timeout bounds the wait for full.
	Timeout time.Duration
	// Settle is how long the process runs after full before its memory is read.
	Settle time.Duration
}

// Watch polls a running instance until it is full, or fails when the process exits or
// timing.Timeout passes. It returns the time of the poll that found it full, the CPU time
// and RSS then, and the counts.
func Watch(ctx context.Context, in *Instance, want Want, timing Timing, logPath string) (ColdStart, error) {
	deadline := in.Started.Add(timing.Timeout)
	tick := time.NewTicker(timing.Poll)
	defer tick.Stop()
	var detail string
	var lastErr error
	for {
		if exited, err := in.Exited(); exited {
			return ColdStart{}, fmt.Errorf("%w (%v); log:\n%s", errExited, err, controlplane.Tail(logPath, 20))
		}
		full := false
		if m, err := harness.Scrape(ctx, harness.FilterURL(in.MetricsURL, in.Prefixes...), in.Prefixes...); err == nil {
			full, detail = in.Full(m, want)
		} else {
			lastErr = err
		}
		if full {
			now := time.Now()
			cpu, err := ReadCPU(in.Pid())
			if err != nil {
				return ColdStart{}, err
			}
			mem, err := ReadMem(in.Pid())
			if err != nil {
				return ColdStart{}, err
			}
			return ColdStart{Full: now.Sub(in.Started), CPU: cpu, RSSAtFull: mem.RSS, Detail: detail}, nil
		}
		if time.Now().After(deadline) {
			return ColdStart{}, fmt.Errorf("not full after %v: last counts %q, last error %v; log:\n%s",
				timing.Timeout, detail, lastErr, controlplane.Tail(logPath, 20))
		}
		select {
		case <-ctx.Done():
			return ColdStart{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// Settle waits timing.Settle, then reads the peak and settled RSS of the instance and its
// heap after a forced collection into cs.
func Settle(ctx context.Context, in *Instance, timing Timing, cs *ColdStart) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(timing.Settle):
	}
	mem, err := ReadMem(in.Pid())
	if err != nil {
		return err
	}
	cs.PeakRSS, cs.SettledRSS = mem.HWM, mem.RSS
	heap, err := HeapAfterGC(ctx, in.PprofURL)
	if err != nil {
		return fmt.Errorf("heap after GC: %w", err)
	}
	cs.HeapAfterGC = heap
	return nil
}

// MeasureColdStart starts a fresh process of s, waits until it is full, lets it settle,
// reads its memory and stops it. check, when not nil, runs on the settled instance (e.g. to
// compare multicache with the API) before it is stopped.
func MeasureColdStart(ctx context.Context, s Subject, env Env, round int, timing Timing, logPath string,
	check func(context.Context, *Instance) error) (ColdStart, error) {
	var before APISnapshot
	if env.API != nil {
		var err error
		if before, err = env.API.Before(ctx); err != nil {
			return ColdStart{}, err
		}
	}
	in, err := s.Start(env, logPath)
	if err != nil {
		return ColdStart{}, err
	}
	defer in.Stop(10 * time.Second)
	cs, err := Watch(ctx, in, env.Want, timing, logPath)
	if err != nil {
		return ColdStart{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	if env.API != nil {
		after, err := env.API.After(ctx)
		if err != nil {
			return ColdStart{}, err
		}
		cost := NewAPICost(before, after)
		cs.API = &cost
	}
	cs.Subject, cs.Round = s.Name, round
	if err := Settle(ctx, in, timing, &cs); err != nil {
		return ColdStart{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	if check != nil {
		if err := check(ctx, in); err != nil {
			return cs, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return cs, nil
}
