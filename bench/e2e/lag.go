package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// The three churn operations, and the op label multicache counts their events under.
const (
	opCreate = iota
	opUpdate
	opDelete
	numOps
)

var opLabels = [numOps]string{"add", "update", "delete"}

// opNames name the operations in the report.
var opNames = [numOps]string{"create", "label update", "delete"}

// eventSample is multicache's pod event counters at one moment.
type eventSample struct {
	// at is the middle of the scrape that read them.
	at time.Time
	// applied counts the pod events applied, per operation (result="ok").
	applied [numOps]float64
	// rejected counts the pod events rejected, whatever the operation.
	rejected float64
}

// eventPoller reads a process's pod event counters every interval: family{kind="Pod"}, with
// op and result labels as multicache_events_total has them (multicache's, or
// informer_events_total of the bare informer read alike). Each churn write is one pod event
// and nothing else writes pods, so the k-th write of an operation is visible in the cache
// once the counter of that operation has grown by k.
type eventPoller struct {
	url, family string
	interval    time.Duration

	mu      sync.Mutex
	samples []eventSample
	lastErr error
}

// Families of pod event counters.
const (
	multicacheEvents = "multicache_events_total"
	informerEvents   = "informer_events_total"
)

// readEvents scrapes the pod event counters of family once.
func readEvents(ctx context.Context, url, family string) (eventSample, error) {
	sent := time.Now()
	m, err := harness.Scrape(ctx, harness.FilterURL(url, family), family+`{kind="Pod"`)
	if err != nil {
		return eventSample{}, err
	}
	s := eventSample{at: sent.Add(time.Since(sent) / 2)}
	for key, v := range m {
		if !strings.HasSuffix(key, `result="ok"}`) {
			s.rejected += v
			continue
		}
		for op, label := range opLabels {
			if strings.Contains(key, `op="`+label+`"`) {
				s.applied[op] += v
			}
		}
	}
	return s, nil
}

// run polls until ctx is done.
func (p *eventPoller) run(ctx context.Context) {
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		s, err := readEvents(ctx, p.url, p.family)
		p.mu.Lock()
		if err == nil {
			p.samples = append(p.samples, s)
		} else {
			p.lastErr = err
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// since returns the samples taken at or after t.
func (p *eventPoller) since(t time.Time) []eventSample {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.samples, t, func(s eventSample, t time.Time) int { return s.at.Compare(t) })
	return slices.Clone(p.samples[i:])
}

// waitLast waits until the poller has a sample taken at or after t and returns the latest.
func (p *eventPoller) waitLast(ctx context.Context, t time.Time, timeout time.Duration) (eventSample, error) {
	deadline := time.Now().Add(timeout)
	for {
		if s, ok := p.last(); ok && !s.at.Before(t) {
			return s, nil
		}
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			return eventSample{}, fmt.Errorf("no sample of %s at %s for %v (last error: %v)", p.family, p.url, timeout, p.lastErr)
		}
		select {
		case <-ctx.Done():
			return eventSample{}, ctx.Err()
		case <-time.After(p.interval):
		}
	}
}

// last returns the latest sample.
func (p *eventPoller) last() (eventSample, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.samples) == 0 {
		return eventSample{}, false
	}
	return p.samples[len(p.samples)-1], true
}

// matchLags pairs the k-th write of op to return (returns sorted) with the first sample
// whose counter of op grew by k over base, and returns the lags. A write whose event the
// samples never show is counted in missing. A lag below zero (the cache applied the event
// before the API's answer reached the harness) counts as zero.
func matchLags(returns []time.Time, samples []eventSample, op int, base float64) (lags []time.Duration, missing int) {
	j := 0
	for k, ret := range returns {
		for j < len(samples) && samples[j].applied[op]-base < float64(k+1) {
			j++
		}
		if j == len(samples) {
			return lags, len(returns) - k
		}
		lags = append(lags, max(0, samples[j].at.Sub(ret)))
	}
	return lags, 0
}

// Quantiles summarises a set of durations.
type Quantiles struct {
	N             int
	P50, P99, Max time.Duration
}

// quantiles computes the nearest-rank p50 and p99 and the maximum of d.
func quantiles(d []time.Duration) Quantiles {
	if len(d) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s)) + 0.999999)
		return s[min(max(i, 1), len(s))-1]
	}
	return Quantiles{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}
