package chaos

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Violation is one broken property, with what shows it.
type Violation struct {
	// Check names the property: compare, invariant, charge, status-convergence,
	// replicas-disagree, double-consumption, false-status, fencing, panic, expectation.
	Check  string
	Detail string
	// Fault is the fault after which it was found ("final" for the end-of-run checks).
	Fault string
	// Count is how many times the same thing was found (the first one is Detail).
	Count int
	// Known is the ID of the known defect it is an instance of (KnownDefects), or "".
	Known string
}

func (v Violation) String() string {
	s := fmt.Sprintf("[%s after %s] %s", v.Check, v.Fault, v.Detail)
	if v.Count > 1 {
		s += fmt.Sprintf(" (%d times)", v.Count)
	}
	if v.Known != "" {
		s += " (known defect " + v.Known + ")"
	}
	return s
}

// sameFinding strips what changes between repeats of one finding (revisions, times).
var sameFinding = regexp.MustCompile(`\(revision [0-9]+[^)]*\)|[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?`)

// FaultResult is one injected fault and what followed.
type FaultResult struct {
	Seq  int
	Kind string
	At   time.Time
	// Recovery is from the moment the fault healed until every replica's comparison with
	// the API was empty (or the bound, when it was exceeded: a violation).
	Recovery time.Duration
	// Takeover (leader faults) is until the other replica led.
	Takeover time.Duration
	// FailoverWrite (kill -9 of the leader) is from the killed leader's lease expiring to
	// the new leader's first status write (see failoverWrite).
	FailoverWrite time.Duration
	// StatusSettled is from the empty comparison until the leader's status writes agreed
	// with its cache.
	StatusSettled time.Duration
	Notes         []string
	Violations    []Violation

	// random is set in the random phase (after the first pass).
	random        bool
	killed        string
	killedAt      time.Time
	failoverKnown bool
	relistsBefore map[string]int
	// slowBindRsv is the reservation of a slow bind, slowBound when its pod was bound.
	slowBindRsv string
	slowBound   time.Time
	// apiFaultsBefore counts, for an API server fault, those injected in the 2 minutes
	// before it (recentAPIDisruptions).
	apiFaultsBefore int
	// For a 410: when the operators' caches were last found differing from the API (the
	// start of the round that found them equal), and when the bare informers had relisted
	// (floorSeen false: not by then).
	cacheCorrectBy, floorRelist time.Duration
	floorSeen                   bool
}

func (r *FaultResult) note(key, value string) { r.Notes = append(r.Notes, key+": "+value) }

func (r *FaultResult) violation(check, format string, args ...any) {
	v := Violation{Check: check, Detail: fmt.Sprintf(format, args...), Fault: fmt.Sprintf("#%d %s", r.Seq, r.Kind), Count: 1}
	v.Known = classify(v)
	r.Violations = append(r.Violations, v)
}

// PauseWindow is a SIGSTOP of a replica or a partition of its path to the API server.
type PauseWindow struct {
	Replica   string
	Stopped   time.Time
	Continued time.Time
}

// BurstRecord is one burst of expiries.
type BurstRecord struct {
	ID     string
	Expiry time.Time
	Count  int
}

// Results gathers everything a run found.
type Results struct {
	mu      sync.Mutex
	Config  string
	Started time.Time
	Took    time.Duration
	// FirstReady and FirstFull: the first start on the populated cluster until /readyz, and
	// until the comparison with the API was empty (after the leader wrote every status).
	FirstReady, FirstFull time.Duration
	// ColdReady and ColdFull: the second replica's cold start on the settled cluster.
	ColdReady, ColdFull time.Duration
	Faults              []*FaultResult
	Final               []Violation
	// Held are the SIGSTOPs and partitions of the replicas.
	Held   []PauseWindow
	Bursts []BurstRecord
	// Drift and Invariants are multicache_drift_total{kind} and
	// multicache_invariant_violations_total summed over every process.
	Drift      map[string]float64
	Invariants float64
	// Writes counts status writes and deletes per replica; LateWrites the ones made by a
	// replica that did not hold the lease (also in Final).
	Writes     map[string]int
	LateWrites int
	// Observed are figures of the final checks (reservations checked, ...).
	Observed map[string]int
	Exits    []string
	Ops      map[string]OpStat
	Relists  map[string]int

	finalIndex map[string]int
}

func (r *Results) add(f *FaultResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Faults = append(r.Faults, f)
}

func (r *Results) addHeld(p PauseWindow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Held = append(r.Held, p)
}

func (r *Results) addBurst(id string, expiry time.Time, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Bursts = append(r.Bursts, BurstRecord{ID: id, Expiry: expiry, Count: n})
}

func (r *Results) final(check, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	detail := fmt.Sprintf(format, args...)
	key := check + " " + sameFinding.ReplaceAllString(detail, "")
	if r.finalIndex == nil {
		r.finalIndex = map[string]int{}
	}
	if i, ok := r.finalIndex[key]; ok {
		r.Final[i].Count++
		return
	}
	r.finalIndex[key] = len(r.Final)
	v := Violation{Check: check, Detail: detail, Fault: "final", Count: 1}
	v.Known = classify(v)
	r.Final = append(r.Final, v)
}

func (r *Results) observe(what string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Observed == nil {
		r.Observed = map[string]int{}
	}
	r.Observed[what] += n
}

// AllViolations returns every violation, the faults' then the final checks'.
func (r *Results) AllViolations() []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Violation
	for _, f := range r.Faults {
		out = append(out, f.Violations...)
	}
	return append(out, r.Final...)
}

// KindStats summarizes the faults of one kind.
type KindStats struct {
	Kind                        string
	Count                       int
	RecoveryMin, RecoveryMedian time.Duration
	RecoveryMax                 time.Duration
	TakeoverMax                 time.Duration
	StatusMax                   time.Duration
	// Violations: "0", or "n" with the known defects among them ("2 (D2)").
	Violations string
}

// ByKind summarizes the faults per kind, in the report's order.
func (r *Results) ByKind() []KindStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []KindStats
	for _, f := range Kinds {
		var rec []time.Duration
		s := KindStats{Kind: f.Kind}
		n, known := 0, map[string]bool{}
		for _, res := range r.Faults {
			if res.Kind != f.Kind {
				continue
			}
			s.Count++
			rec = append(rec, res.Recovery)
			s.TakeoverMax = max(s.TakeoverMax, res.Takeover)
			s.StatusMax = max(s.StatusMax, res.StatusSettled)
			for _, v := range res.Violations {
				n++
				if v.Known != "" {
					known[v.Known] = true
				}
			}
		}
		s.Violations = fmt.Sprint(n)
		if len(known) > 0 {
			s.Violations += " (" + strings.Join(slices.Sorted(maps.Keys(known)), ", ") + ")"
		}
		if len(rec) > 0 {
			sort.Slice(rec, func(i, j int) bool { return rec[i] < rec[j] })
			s.RecoveryMin, s.RecoveryMedian, s.RecoveryMax = rec[0], rec[len(rec)/2], rec[len(rec)-1]
		}
		out = append(out, s)
	}
	return out
}
