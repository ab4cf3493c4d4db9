package chaos

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// recoverAndCheck runs after every fault, on a paused workload: it measures the time until
// every replica's cache equals the API, then checks the cache (invariants, drift, charges),
// the leader's status writes and the replicas' agreement.
func (h *Harness) recoverAndCheck(ctx context.Context, healed time.Time, res *FaultResult) {
	bound := h.Cfg.RecoveryBound
	for _, r := range h.Replicas {
		h.ensureReady(ctx, r, res)
	}
	if waited := time.Since(healed); waited > 100*time.Millisecond {
		res.note("replicas ready after", since(healed))
	}
	// How the differences went down: a long flat stretch is time nobody relisted.
	var steps []string
	lastN := ""
	diffs, err := h.waitCompareEmpty(ctx, h.Replicas, bound, func(replica string, diffs []Difference) {
		n := fmt.Sprintf("%s:%d", replica, len(diffs))
		if len(diffs) > 0 {
			n += "(" + diffs[0].Kind + ")"
		}
		if n != lastN {
			steps = append(steps, n+"@"+since(healed))
			lastN = n
			// Which objects, for the log: the report keeps the counts.
			h.logf("fault %s: replica %s differs from the API %v after the heal: %s", res.Kind, replica, since(healed), sample(diffs, 5))
		}
	})
	res.Recovery = time.Since(healed)
	res.note("last comparison round took", h.lastRound.Round(time.Millisecond).String())
	if len(steps) > 0 && (res.Kind == APIRestart.Kind || res.Kind == Compaction410.Kind) {
		res.note("differences over time", strings.Join(steps[:min(8, len(steps))], " "))
	}
	if err != nil {
		res.violation("compare", "cache not equal to the API %v after the fault healed: %v; %s", bound, err, sample(diffs, 5))
	}
	if res.Kind == Compaction410.Kind && h.floor != nil {
		res.cacheCorrectBy = max(0, res.Recovery-h.lastRound)
		res.floorRelist, res.floorSeen = h.floor.relistAfter(healed)
		floor := "not yet"
		if res.floorSeen {
			floor = dur(res.floorRelist)
		}
		res.note("caches equal by", dur(res.cacheCorrectBy))
		res.note("bare informers (pods, nodes) relisted after", floor)
	}
	if res.relistsBefore != nil {
		after := h.Rec.Relists()
		res.note("suite's reflectors relisted (410)", fmt.Sprintf("pods %d, reservations %d, podgroups %d",
			after["pods"]-res.relistsBefore["pods"], after["reservations"]-res.relistsBefore["reservations"],
			after["podgroups"]-res.relistsBefore["podgroups"]))
	}
	// A quiet cluster: the simulated scheduler has bound or dropped everything.
	if err := h.waitSchedulerIdle(ctx, bound); err != nil {
		res.violation("compare", "%v", err)
	}
	if diffs, err := h.waitCompareEmpty(ctx, h.Replicas, bound, nil); err != nil {
		res.violation("compare", "cache not equal to the API on a quiet cluster: %v; %s", err, sample(diffs, 5))
	}
	if res.Kind == "final" {
		// The verify loop runs all along (its counter is scraped at every check and before
		// every kill); at the end it must have run once more on the quiet cache.
		h.waitVerifyRun(ctx, res)
	}
	h.checkMetrics(ctx, res)
	h.checkCharges(ctx, res)
	h.checkStatus(ctx, res)
	h.checkAgree(ctx, res)
	if res.slowBindRsv != "" {
		h.checkSlowBind(ctx, res)
	}
}

// waitCompareEmpty polls every replica's /debug/cache/compare until all are empty in the
// same round, or returns the last differences after bound. timeline, if not nil, is called
// with the first replica whose comparison was not empty in a round, and its differences.
func (h *Harness) waitCompareEmpty(ctx context.Context, replicas []*Replica, bound time.Duration,
	timeline func(replica string, diffs []Difference)) ([]Difference, error) {
	var last []Difference
	var lastErr error
	poll(bound, 200*time.Millisecond, func() bool {
		// The replicas are compared at once: a round lasts one comparison, not one per
		// replica, so the recovery is not overstated by the probe.
		diffs := make([][]Difference, len(replicas))
		errs := make([]error, len(replicas))
		var wg sync.WaitGroup
		roundStart := time.Now()
		for i, r := range replicas {
			wg.Go(func() { diffs[i], errs[i] = r.Compare(ctx) })
		}
		wg.Wait()
		h.lastRound = time.Since(roundStart)
		for i, r := range replicas {
			name := r.Name
			switch {
			case errs[i] != nil:
				last, lastErr, name = nil, fmt.Errorf("replica %s: %w", r.Name, errs[i]), r.Name+"(error)"
			case len(diffs[i]) > 0:
				last, lastErr = diffs[i], fmt.Errorf("replica %s: %d differences", r.Name, len(diffs[i]))
			default:
				continue
			}
			if timeline != nil {
				timeline(name, last)
			}
			return false
		}
		last, lastErr = nil, nil
		return true
	})
	return last, lastErr
}

// waitSchedulerIdle waits until no pod waits for the simulated scheduler.
func (h *Harness) waitSchedulerIdle(ctx context.Context, bound time.Duration) error {
	waiting := 0
	var err error
	if poll(bound, 250*time.Millisecond, func() bool {
		// Filtered by the API server: listing every pod four times a second would load it.
		var list corev1.PodList
		err = h.Env.Client.List(ctx, &list, client.InNamespace(h.NS),
			client.MatchingFields{"spec.schedulerName": SchedulerName, "spec.nodeName": ""})
		waiting = 0
		for i := range list.Items {
			if list.Items[i].DeletionTimestamp == nil {
				waiting++
			}
		}
		return err == nil && waiting == 0
	}) {
		return nil
	}
	return fmt.Errorf("%d pods still wait for the simulated scheduler after %v (err %v)", waiting, bound, err)
}

// waitVerifyRun waits until every replica's verify loop ran once more (on the quiet,
// caught-up cache).
func (h *Harness) waitVerifyRun(ctx context.Context, res *FaultResult) {
	const metric = "multicache_verify_duration_seconds_count"
	before := map[string]float64{}
	for _, r := range h.Replicas {
		if m, err := r.Metrics(ctx); err == nil {
			before[r.Name] = m.Sum(metric)
		}
	}
	bound := 3*h.Cfg.VerifyPeriod + 5*time.Second
	deadline := time.Now().Add(bound)
	for _, r := range h.Replicas {
		if !poll(time.Until(deadline), 250*time.Millisecond, func() bool {
			m, err := r.Metrics(ctx)
			return err == nil && m.Sum(metric) > before[r.Name]
		}) {
			res.violation("invariant", "replica %s: the verify loop did not run within %v", r.Name, bound)
		}
	}
}

// scrape keeps the last metrics of a replica's current incarnation (before a kill, and at
// every check), so that counters survive the process.
func (h *Harness) scrape(ctx context.Context, r *Replica) harness.Metrics {
	m, err := r.Metrics(ctx)
	if err != nil {
		return nil
	}
	inc, _ := r.Incarnation()
	h.metricsMu.Lock()
	h.metrics[fmt.Sprintf("%s/%02d", r.Name, inc)] = m
	h.metricsMu.Unlock()
	return m
}

// checkMetrics: multicache_invariant_violations_total stays 0 on every replica; the
// violations the verify loop logged go into the report.
func (h *Harness) checkMetrics(ctx context.Context, res *FaultResult) {
	for _, r := range h.Replicas {
		m := h.scrape(ctx, r)
		if m == nil {
			continue
		}
		if n := m.Sum("multicache_invariant_violations_total"); n > 0 {
			inc, _ := r.Incarnation()
			key := fmt.Sprintf("%s/%02d", r.Name, inc)
			h.metricsMu.Lock()
			reported := h.reportedInvariants[key]
			h.reportedInvariants[key] = n
			h.metricsMu.Unlock()
			if n > reported {
				logged := grepLogs(r.Logs(), "cache invariant violated")
				res.violation("invariant", "replica %s: multicache_invariant_violations_total %v; logged: %s", r.Name, n,
					strings.Join(logged[:min(5, len(logged))], " | "))
			}
		}
	}
}

// checkStatus: the leader's status writes catch up with its cache: every Reservation's
// and PodGroup's status in the API says what the leader's cache says (Matched shows as
// Reserved while its owner is only assumed).
func (h *Harness) checkStatus(ctx context.Context, res *FaultResult) {
	start := time.Now()
	var problems []string
	settled := poll(h.Cfg.RecoveryBound, 500*time.Millisecond, func() bool { problems = h.statusProblems(ctx); return len(problems) == 0 })
	res.StatusSettled = time.Since(start)
	if settled {
		return
	}
	sort.Strings(problems)
	res.violation("status-convergence", "%d objects' status differs from the leader's cache %v after recovery, e.g. %s",
		len(problems), h.Cfg.RecoveryBound, strings.Join(problems[:min(5, len(problems))], "; "))
}

func (h *Harness) statusProblems(ctx context.Context) []string {
	l := h.leader(ctx)
	if l == nil {
		return []string{"no leader"}
	}
	d, err := l.Dump(ctx)
	if err != nil {
		return []string{err.Error()}
	}
	var rsvs v1alpha1.ReservationList
	var pgs v1alpha1.PodGroupList
	if err := h.Env.Client.List(ctx, &rsvs, client.InNamespace(h.NS)); err != nil {
		return []string{err.Error()}
	}
	if err := h.Env.Client.List(ctx, &pgs, client.InNamespace(h.NS)); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, r := range rsvs.Items {
		key := r.Namespace + "/" + r.Name
		c, ok := d.Reservations[key]
		if !ok {
			problems = append(problems, key+" is not in the leader's cache")
			continue
		}
		want := statusOf(d, c)
		if string(r.Status.Phase) != want {
			problems = append(problems, fmt.Sprintf("reservation %s: status %q, leader's cache %q", key, r.Status.Phase, want))
			continue
		}
		if want == string(v1alpha1.ReservationMatched) {
			owner := ""
			if r.Status.CurrentOwner != nil {
				owner = r.Status.CurrentOwner.Namespace + "/" + r.Status.CurrentOwner.Name
			}
			if owner != c.Owner {
				problems = append(problems, fmt.Sprintf("reservation %s: status owner %q, leader's cache %q", key, owner, c.Owner))
			}
		}
	}
	for _, pg := range pgs.Items {
		key := pg.Namespace + "/" + pg.Name
		c, ok := d.PodGroups[key]
		if !ok {
			problems = append(problems, key+" is not in the leader's cache")
			continue
		}
		s := pg.Status
		if string(s.Phase) != c.Phase || s.Pending != c.Counts.Pending || s.Scheduled != c.Counts.Scheduled ||
			s.Running != c.Counts.Running || s.Succeeded != c.Counts.Succeeded || s.Failed != c.Counts.Failed {
			problems = append(problems, fmt.Sprintf("pod group %s: status %s %d/%d/%d/%d/%d, leader's cache %s %+v",
				key, s.Phase, s.Pending, s.Scheduled, s.Running, s.Succeeded, s.Failed, c.Phase, c.Counts))
		}
	}
	return problems
}

// checkAgree: the replicas' caches agree on every reservation's phase, owner and times and
// every group's phase and counts (they derive them from the same objects).
func (h *Harness) checkAgree(ctx context.Context, res *FaultResult) {
	var problems []string
	for try := range 6 {
		if try > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		if problems = h.disagreements(ctx); len(problems) == 0 {
			return
		}
	}
	sort.Strings(problems)
	res.violation("replicas-disagree", "%d differences between the replicas' caches, e.g. %s", len(problems),
		strings.Join(problems[:min(5, len(problems))], "; "))
}

// disagreements compares the dumps of the two replicas.
func (h *Harness) disagreements(ctx context.Context) []string {
	var dumps []*Dump
	for _, r := range h.Replicas {
		d, err := r.Dump(ctx)
		if err != nil {
			return []string{err.Error()}
		}
		dumps = append(dumps, d)
	}
	a, b := dumps[0], dumps[1]
	var problems []string
	expired := string(v1alpha1.ReservationExpired)
	for key := range union(a.Reservations, b.Reservations) {
		ra, inA := a.Reservations[key]
		rb, inB := b.Reservations[key]
		switch {
		case !inA && rb.Phase == expired, !inB && ra.Phase == expired:
			// An Expired reservation the leader is deleting (garbage collection) may be gone
			// from one cache a moment before the other.
		case !inA || !inB || ra.Phase != rb.Phase || ra.Owner != rb.Owner ||
			!sameTime(ra.ReservedAt, rb.ReservedAt) || !sameTime(ra.ExpiresAt, rb.ExpiresAt):
			problems = append(problems, fmt.Sprintf("reservation %s: a %s, b %s", key, ra.describe(inA), rb.describe(inB)))
		}
	}
	for key := range union(a.PodGroups, b.PodGroups) {
		ga, inA := a.PodGroups[key]
		gb, inB := b.PodGroups[key]
		if !inA || !inB || ga.Phase != gb.Phase || ga.Counts != gb.Counts {
			problems = append(problems, fmt.Sprintf("pod group %s: a %s %+v (held %v), b %s %+v (held %v)", key, ga.Phase, ga.Counts, inA, gb.Phase, gb.Counts, inB))
		}
	}
	uids, err := h.ownerUIDs(ctx)
	if err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, doubleConsumed("a", a, uids)...)
	return append(problems, doubleConsumed("b", b, uids)...)
}

// union is the set of the keys of two maps.
func union[V any](a, b map[string]V) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// doubleConsumed lists pods that own more than one Matched reservation in a dump. A dump
// names an owner by namespace/name only; ownerUIDs (the owners' UIDs the API's statuses
// record) tell the pods of one name apart: a pod recreated under its name (a StatefulSet's)
// consumes its predecessor's replacement Reservation while the one its predecessor consumed
// stays Matched by that predecessor.
func doubleConsumed(replica string, d *Dump, ownerUIDs map[string]types.UID) []string {
	owners := map[string][]string{}
	for key, r := range d.Reservations {
		if r.Phase == string(v1alpha1.ReservationMatched) && r.Owner != "" {
			owner := r.Owner
			if uid := ownerUIDs[key]; uid != "" {
				owner += " (UID " + string(uid) + ")"
			}
			owners[owner] = append(owners[owner], key)
		}
	}
	var out []string
	for owner, keys := range owners {
		if len(keys) > 1 {
			sort.Strings(keys)
			out = append(out, fmt.Sprintf("%s: pod %s holds %d reservations: %v", replica, owner, len(keys), keys))
		}
	}
	return out
}

// ownerUIDs returns the owner's UID each Matched reservation's status in the API records.
func (h *Harness) ownerUIDs(ctx context.Context) (map[string]types.UID, error) {
	var rsvs v1alpha1.ReservationList
	if err := h.Env.Client.List(ctx, &rsvs, client.InNamespace(h.NS)); err != nil {
		return nil, err
	}
	uids := map[string]types.UID{}
	for _, r := range rsvs.Items {
		if o := r.Status.CurrentOwner; o != nil {
			uids[r.Namespace+"/"+r.Name] = o.UID
		}
	}
	return uids, nil
}

// checkSlowBind: the reservation whose pod was bound after its assumption expired ends
// Matched by that pod. The note says whether replica a's logs (every incarnation) have the
// assumption expire.
func (h *Harness) checkSlowBind(ctx context.Context, res *FaultResult) {
	ns, name, _ := strings.Cut(res.slowBindRsv, "/")
	pod := "t" + name[1:]
	logs := h.Replicas[0].Logs()
	expiry := "no: the API confirmed the pod first"
	for _, line := range grepLogs(logs, "assumed pod expired") {
		if strings.Contains(line, fmt.Sprintf(`"pod":{"name":%q,"namespace":%q}`, pod, ns)) {
			expiry = fmt.Sprintf("at %s, bound at %s", cmp.Or(logField(line, "ts"), "(no time)"), res.slowBound.UTC().Format(time.RFC3339))
			break
		}
	}
	res.note("assumption expired", expiry)
	r := &v1alpha1.Reservation{}
	var err error
	if !poll(h.Cfg.RecoveryBound, 250*time.Millisecond, func() bool {
		err = h.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, r)
		return err == nil && r.Status.Phase == v1alpha1.ReservationMatched && r.Status.CurrentOwner != nil && r.Status.CurrentOwner.Name == pod
	}) {
		res.violation("expectation", "reservation %s (its pod bound after the assumption expired) is %v, want Matched by %s (err %v)",
			res.slowBindRsv, r.Status.Phase, pod, err)
	}
}

func sample(diffs []Difference, n int) string {
	var parts []string
	for i, d := range diffs {
		if i == n {
			parts = append(parts, fmt.Sprintf("... %d more", len(diffs)-n))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// describe is a reservation of a dump for a message ("(none)" when the dump lacks it).
func (r ReservationDump) describe(held bool) string {
	if !held {
		return "(none)"
	}
	return fmt.Sprintf("%s %q (reservedAt %s, expiresAt %s)", r.Phase, r.Owner, clock(r.ReservedAt), clock(r.ExpiresAt))
}

func clock(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.TimeOnly)
}

// readyBound is how long a replica may take to catch up after a fault healed.
const readyBound = 90 * time.Second

// ensureReady waits until the replica is ready; one that is not within readyBound is a
// violation (with what its catch-up still misses and how its cache compares with the API),
// and is restarted, as an operator of the cluster would, so that the run goes on.
func (h *Harness) ensureReady(ctx context.Context, r *Replica, res *FaultResult) {
	if err := r.WaitReady(ctx, readyBound); err == nil {
		return
	}
	missing := "unknown"
	if lines := grepLogs(r.Logs(), "waiting for the cache to catch up"); len(lines) > 0 {
		missing = cmp.Or(logField(lines[len(lines)-1], "missing"), missing)
	}
	cmp := "compare failed"
	if diffs, err := r.Compare(ctx); err == nil {
		cmp = fmt.Sprintf("%d differences", len(diffs))
	}
	inc, started := r.Incarnation()
	res.violation("not-ready", "replica %s (incarnation %d, started %s) not ready %v after the fault healed; its catch-up: %q; "+
		"its cache against the API: %s; restarted it", r.Name, inc, started.Format("15:04:05"), readyBound, missing, cmp)
	h.scrape(ctx, r)
	if err := r.Kill9(); err != nil {
		return
	}
	if err := r.Start(); err == nil {
		_ = r.WaitReady(ctx, readyBound)
	}
}
