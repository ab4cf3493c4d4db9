package chaos

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

// checkLeaseExpiry checks every write a leader makes (the guarded status writes and
// reservation deletes, and Events) against its own lease by time: a write the API answered
// after the writer's lease expired (leaseDuration after the renewal a standby last saw change
// the record, seenRenewal: the earliest moment it may take over) is a violation, reported through fail once per
// process. A write whose request and answer straddle a SIGSTOP of its process or a
// partition of its path (held) is left out: the API may have taken it before. Writes of a process that never renewed are
// the revision check's (readWrites). It returns how many writes it checked.
func checkLeaseExpiry(entries []writelog.Entry, leaseName string, leaseDuration time.Duration, held []PauseWindow,
	fail func(check, format string, args ...any)) (checked int) {
	renewals := map[procKey][]time.Time{}
	for _, e := range entries {
		res, _, name, _ := e.Resource()
		if !e.Start && res == "leases" && name == leaseName && e.OK() && e.Holder != "" {
			k := procKey{e.Replica, e.PID}
			renewals[k] = append(renewals[k], e.Sent)
		}
	}
	for _, r := range renewals {
		sort.Slice(r, func(i, j int) bool { return r[i].Before(r[j]) })
	}
	type late struct {
		n           int
		first, last writelog.Entry
		worst       time.Duration
		objects     map[string]bool
	}
	lates := map[procKey]*late{}
	for _, e := range entries {
		if e.Start || !e.OK() || !leaderWrite(e) {
			continue
		}
		k := procKey{e.Replica, e.PID}
		r := renewals[k]
		// The last renewal sent before the answer came.
		i := sort.Search(len(r), func(i int) bool { return r[i].After(e.Time) })
		if i == 0 {
			continue
		}
		checked++
		expired := seenRenewal(r, i).Add(leaseDuration)
		if !e.Time.After(expired) || straddles(e, held) {
			continue
		}
		l := lates[k]
		if l == nil {
			l = &late{first: e, objects: map[string]bool{}}
			lates[k] = l
		}
		l.n++
		l.last = e
		l.worst = max(l.worst, e.Time.Sub(expired))
		res, ns, name, _ := e.Resource()
		l.objects[res+" "+ns+"/"+name] = true
	}
	for k, l := range lates {
		objs := slices.Sorted(maps.Keys(l.objects))
		fail("lease-expired", "replica %s (pid %d): the API took %d writes after its lease expired (the renewal a standby saw + %v), from %s to %s, "+
			"up to %v late; e.g. %s", k.replica, k.pid, l.n, leaseDuration, l.first.Time.Format("15:04:05.000"),
			l.last.Time.Format("15:04:05.000"), l.worst.Round(time.Millisecond), strings.Join(objs[:min(3, len(objs))], ", "))
	}
	return checked
}

// guardedWrite reports whether the write is one the revision check attributes: a status
// write of a Reservation, PodGroup or Movement, or a reservation delete.
func guardedWrite(e writelog.Entry) bool {
	res, _, _, sub := e.Resource()
	return (sub == "status" && (res == "reservations" || res == "podgroups" || res == "movements")) ||
		(res == "reservations" && e.Method == "DELETE")
}

// leaderWrite reports whether only the leader may make the write: a guarded write or an
// Event.
func leaderWrite(e writelog.Entry) bool {
	res, _, _, _ := e.Resource()
	return guardedWrite(e) || res == "events"
}

// straddles reports whether the write's process was SIGSTOPped, or its path cut, between
// its request and its answer.
func straddles(e writelog.Entry, held []PauseWindow) bool {
	for _, p := range held {
		if p.Replica == e.Replica && e.Sent.Before(p.Continued) && e.Time.After(p.Stopped) {
			return true
		}
	}
	return false
}
