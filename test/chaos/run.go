package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Run injects every kind once (FirstPass), then random kinds until Config.Duration has
// passed and Config.MinFaults were injected, then runs the final checks.
func (h *Harness) Run(ctx context.Context) {
	h.Results.Started = time.Now()
	seq := 0
	for _, f := range FirstPass {
		seq++
		h.cycle(ctx, seq, f)
	}
	deadline := time.Now().Add(h.Cfg.Duration)
	for (time.Now().Before(deadline) || seq < h.Cfg.MinFaults) && ctx.Err() == nil {
		seq++
		h.cycle(ctx, seq, pick(h.intn, Kinds, func(f Fault) int { return f.weight }))
	}
	h.final(ctx)
	h.Results.Took = time.Since(h.Results.Started)
}

// cycle: load, fault, pause, recovery and checks.
func (h *Harness) cycle(ctx context.Context, seq int, f Fault) {
	res := &FaultResult{Seq: seq, Kind: f.Kind, At: time.Now(), random: seq > len(FirstPass)}
	h.W.Resume()
	load := h.Cfg.LoadMin
	if spread := h.Cfg.LoadMax - h.Cfg.LoadMin; spread > 0 {
		load += time.Duration(h.intn(int(spread/time.Millisecond))) * time.Millisecond
	}
	time.Sleep(load)
	if f.Kind == APIRestart.Kind || f.Kind == Compaction410.Kind {
		res.apiFaultsBefore = h.recentAPIDisruptions(time.Now())
		res.note("API server faults in the 2 min before", fmt.Sprint(res.apiFaultsBefore))
		h.apiDisruptions = append(h.apiDisruptions, time.Now())
	}
	healed, err := f.Inject(ctx, h, res)
	h.W.Pause()
	if err != nil {
		res.violation("fault", "injecting the fault: %v", err)
	}
	h.recoverAndCheck(ctx, healed, res)
	h.Results.add(res)
	h.logf("fault #%d %s: cache equal to the API %v after it healed (takeover %v, status settled %v more); %s; %d violations",
		seq, f.Kind, res.Recovery.Round(time.Millisecond), res.Takeover.Round(time.Millisecond),
		res.StatusSettled.Round(time.Millisecond), strings.Join(res.Notes, ", "), len(res.Violations))
	for _, v := range res.Violations {
		h.logf("  VIOLATION %s", v)
	}
}

// backoffWindow is how long client-go's reflectors keep growing their backoff (0.8 s,
// doubled at every ListAndWatch that ends, jitter 1.0, cap 30 s) before it starts again
// from 0.8 s (v0.37.1: defaultBackoffReset). After an API server restart every watch is
// answered 410 and every reflector relists after that backoff, so the n-th API server fault
// in a window waits up to 0.8 s x 2^n before the operators' informers relist.
const backoffWindow = 2 * time.Minute

// recentAPIDisruptions counts the API server faults injected in the backoff window before
// now (a replica restarted meanwhile starts its reflectors afresh).
func (h *Harness) recentAPIDisruptions(now time.Time) int {
	n := 0
	for _, at := range h.apiDisruptions {
		if now.Sub(at) < backoffWindow {
			n++
		}
	}
	return n
}

// final lets the workload's follow-ups finish and the short TTLs and timeouts pass, checks
// the quiet cluster once more, then checks the whole history.
func (h *Harness) final(ctx context.Context) {
	h.W.StopRandom()
	h.W.Resume()
	poll(30*time.Second, 200*time.Millisecond, func() bool { return h.W.PendingSteps() == 0 })
	h.W.Pause()
	_, rsvs, groups := h.W.Intents()
	due := []time.Time{time.Now()}
	for _, r := range rsvs {
		if r.Class == "expire" && !r.Deleted {
			due = append(due, r.Created.Add(time.Duration(r.TTL)*time.Second+judgedAfter))
		}
	}
	for _, g := range groups {
		if g.Class == "starves" && !g.Deleted {
			due = append(due, g.Created.Add(time.Duration(g.Timeout)*time.Second+judgedAfter))
		}
	}
	if wait := time.Until(slices.MaxFunc(due, time.Time.Compare)); wait > 0 {
		time.Sleep(min(wait, 6*time.Second))
	}
	res := &FaultResult{Seq: 0, Kind: "final"}
	h.recoverAndCheck(ctx, time.Now(), res)
	for _, v := range res.Violations {
		h.Results.final(v.Check, "%s", v.Detail)
	}
	end := time.Now()

	hist := h.Rec.History()
	_, rsvs, groups = h.W.Intents()
	h.Results.mu.Lock()
	held := slices.Clone(h.Results.Held)
	h.Results.mu.Unlock()
	writes := readWrites(h.Replicas, h.Lease, hist.Leases, h.Results.final, h.logf)
	h.Results.mu.Lock()
	failoverWrite(writes.entries, h.Results.Faults, h.Lease, h.Cfg.LeaseDuration)
	h.Results.mu.Unlock()
	h.Results.observe("leader writes checked against the lease's expiry",
		checkLeaseExpiry(writes.entries, h.Lease, h.Cfg.LeaseDuration, held, h.Results.final))
	checked, seen := checkReservationHistory(hist, h.Cfg.ReservationTTL, writes.Writer, h.Results.final)
	h.Results.observe("reservations checked (history)", checked)
	h.Results.observe("reservation status writes seen", seen)
	h.Results.observe("pod groups checked (history)", checkGroupHistory(hist, writes.Writer, h.Results.final))
	h.Results.observe("intents checked", checkExpectations(hist, h.NS, rsvs, groups, end, h.Results.final))
	h.Results.observe("logs scanned for panics", checkPanics(h.Replicas, h.Results.final))

	for _, r := range h.Replicas {
		h.scrape(ctx, r)
	}
	drift, inv := map[string]float64{}, 0.0
	h.metricsMu.Lock()
	for _, m := range h.metrics {
		for kind, v := range m.ByLabel("multicache_drift_total", "kind") {
			drift[kind] += v
		}
		inv += m.Sum("multicache_invariant_violations_total")
	}
	h.metricsMu.Unlock()
	var exits []string
	for _, r := range h.Replicas {
		for _, e := range r.Exits() {
			if !e.Expected {
				exits = append(exits, fmt.Sprintf("%s incarnation %d at %s: %s (%s)", r.Name, e.Incarnation, e.At.Format("15:04:05"), e.How, e.Reason))
			}
		}
	}
	sort.Strings(exits)
	h.Results.mu.Lock()
	h.Results.Drift, h.Results.Invariants = drift, inv
	h.Results.Writes, h.Results.LateWrites = writes.PerProc, writes.Late
	h.Results.Exits = exits
	h.Results.Ops = h.W.Stats()
	h.Results.Relists = h.Rec.Relists()
	h.Results.mu.Unlock()
	if inv > 0 {
		h.Results.final("invariant", "multicache_invariant_violations_total summed over every process: %v", inv)
	}
}
