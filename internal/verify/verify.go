// Package verify is the cache's self-check in production. Every period it checks the
// cache's invariants and compares the cache with the manager's informers (never the API
// server), counts what it finds (multicache_invariant_violations_total,
// multicache_drift_total{kind}), logs each finding once, and repairs drift by feeding the
// drifted keys to their feeds again.
//
// An event on its way from an informer to the cache looks like drift for a moment, so a
// difference counts only when a second comparison, Confirm later, finds it unchanged (same
// problem, same resource versions on both sides).
package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// maxLoggedPerRun bounds the lines one run logs; the metric counts every finding.
const maxLoggedPerRun = 20

// Cache is what the loop checks.
type Cache interface {
	drift.Cache
	// CheckInvariants checks every store and what spans stores; it counts violations in
	// multicache_invariant_violations_total.
	CheckInvariants() []error
}

// RefeedFunc feeds the object of kind with key (as drift renders it) to its feed again.
type RefeedFunc func(ctx context.Context, kind stores.Kind, key string) error

// Loop is the verify loop; run it with Start (a manager runnable on every replica, once the
// cache caught up).
type Loop struct {
	Cache  Cache
	Source drift.Source
	// Keep filters cluster objects the way the feeds do (sub-cluster); nil keeps all.
	Keep   drift.KeepFunc
	Refeed RefeedFunc
	// Period between runs; Confirm between a run's two comparisons.
	Period, Confirm time.Duration
	Log             logr.Logger

	// reported are the findings logged by the previous run: a finding still there is not
	// logged (or counted) again.
	reportedDrift      map[drift.Difference]bool
	reportedViolations map[string]bool
}

// Result is what one run found.
type Result struct {
	// Drift are the differences confirmed by the second comparison (all were re-fed).
	Drift []drift.Difference
	// Violations are the invariants that did not hold.
	Violations []error
	// Took is how long the run took, without the wait between the comparisons.
	Took time.Duration
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica checks its
// own cache.
func (l *Loop) NeedLeaderElection() bool { return false }

// Start runs the loop every Period until ctx is done.
func (l *Loop) Start(ctx context.Context) error {
	ticker := time.NewTicker(l.Period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if _, err := l.Run(ctx); err != nil && ctx.Err() == nil {
			l.Log.Error(err, "verifying the cache")
		}
	}
}

// Run checks the cache once: invariants, then the comparison with the informers, confirmed
// after Confirm; confirmed drift is counted, logged (once per finding) and re-fed.
func (l *Loop) Run(ctx context.Context) (Result, error) {
	var res Result
	start := time.Now()
	res.Violations = l.Cache.CheckInvariants()
	l.reportViolations(res.Violations)

	first, err := drift.Compare(ctx, l.Cache, l.Source, l.Keep)
	if err != nil {
		return res, fmt.Errorf("comparing the cache with the informers: %w", err)
	}
	took := time.Since(start)
	if len(first) > 0 {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(l.Confirm):
		}
		again := time.Now()
		second, err := drift.Compare(ctx, l.Cache, l.Source, l.Keep)
		if err != nil {
			return res, fmt.Errorf("comparing the cache with the informers again: %w", err)
		}
		took += time.Since(again)
		res.Drift = confirmed(first, second)
	}
	var errs []error
	reported := make(map[drift.Difference]bool, len(res.Drift))
	logged := 0
	for _, d := range res.Drift {
		reported[d] = true
		if !l.reportedDrift[d] {
			metrics.DriftTotal.WithLabelValues(string(d.Kind)).Inc()
			if logged++; logged <= maxLoggedPerRun {
				l.Log.Info("cache drifted from the informers; feeding the object again",
					"kind", d.Kind, "key", d.Key, "problem", d.Problem, "cacheVersion", d.CacheVersion, "informerVersion", d.APIVersion)
			}
		}
		if err := l.Refeed(ctx, d.Kind, d.Key); err != nil {
			errs = append(errs, fmt.Errorf("re-feeding %s %s: %w", d.Kind, d.Key, err))
		}
	}
	if logged > maxLoggedPerRun {
		l.Log.Info("more objects drifted than logged; all were fed again", "logged", maxLoggedPerRun, "drifted", logged)
	}
	l.reportedDrift = reported
	res.Took = took
	metrics.VerifyDuration.Observe(took.Seconds())
	return res, errors.Join(errs...)
}

// confirmed returns the differences of first that second found unchanged.
func confirmed(first, second []drift.Difference) []drift.Difference {
	again := make(map[drift.Difference]bool, len(second))
	for _, d := range second {
		again[d] = true
	}
	var out []drift.Difference
	for _, d := range first {
		if again[d] {
			out = append(out, d)
		}
	}
	return out
}

// reportViolations logs each violation once while it lasts.
func (l *Loop) reportViolations(violations []error) {
	reported := make(map[string]bool, len(violations))
	logged := 0
	for _, v := range violations {
		msg := v.Error()
		reported[msg] = true
		if !l.reportedViolations[msg] {
			if logged++; logged <= maxLoggedPerRun {
				l.Log.Info("cache invariant violated", "violation", msg)
			}
		}
	}
	if logged > maxLoggedPerRun {
		l.Log.Info("more invariants violated than logged", "logged", maxLoggedPerRun, "violated", logged)
	}
	l.reportedViolations = reported
}
