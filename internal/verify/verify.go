// Package verify is the cache's self-check in production. Every period it checks the
// cache's invariants and compares the cache with the manager's informers (never the API
// server), counts what it finds (multicache_invariant_violations_total,
// multicache_drift_total{kind}), logs each finding once, and repairs drift by feeding the
// drifted keys to their feeds again.
//
// An event on its way from an informer to the cache looks like drift for a moment (and,
// under load, for as long as the feed's queue takes), so a difference counts only when the
// next run finds it unchanged, a Period later: same problem, same resource versions on both
// sides. A feed that has not applied an object's version for a whole period has lost it.
package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// Listings are what is compared; nil means drift.Listings.
	Listings []drift.Listing
	// Period between runs.
	Period time.Duration
	Log    logr.Logger

	// mu serialises runs (Start's and on-demand ones).
	mu sync.Mutex
	// suspects are the differences the previous run found: found again unchanged, they are
	// drift.
	suspects map[drift.Difference]bool
	// reported are the findings logged by the previous run: a finding still there is not
	// logged (or counted) again.
	reportedDrift      map[drift.Difference]bool
	reportedViolations map[string]bool
}

// Result is what one run found.
type Result struct {
	// Drift are the differences the previous run found too, unchanged (all were re-fed).
	Drift []drift.Difference
	// Suspects are the differences found for the first time: drift if the next run finds
	// them again.
	Suspects int
	// Violations are the invariants that did not hold.
	Violations []error
	// Took is how long the run took, without the wait between the comparisons.
	Took time.Duration
}

// Start runs the loop every Period until ctx is done. It first puts a zero in
// multicache_drift_total for every watched kind, so that a healthy cache shows 0 drift
// rather than no data.
func (l *Loop) Start(ctx context.Context) error {
	for _, kind := range l.Cache.WatchedKinds() {
		metrics.DriftTotal.WithLabelValues(string(kind))
	}
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

// Run checks the cache once: invariants, then the comparison with the informers; a
// difference the previous run found too, unchanged, is drift: counted, logged (once per
// finding) and re-fed.
func (l *Loop) Run(ctx context.Context) (Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var res Result
	start := time.Now()
	res.Violations = l.Cache.CheckInvariants()
	l.reportViolations(res.Violations)

	diffs, err := drift.Compare(ctx, l.Cache, l.Source, l.Keep, l.Listings...)
	if err != nil {
		return res, fmt.Errorf("comparing the cache with the informers: %w", err)
	}
	seen := make(map[drift.Difference]bool, len(diffs))
	for _, d := range diffs {
		seen[d] = true
		if l.suspects[d] {
			res.Drift = append(res.Drift, d)
		} else {
			res.Suspects++
		}
	}
	l.suspects = seen
	took := time.Since(start)
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
