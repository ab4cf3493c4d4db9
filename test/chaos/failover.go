package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

// Failover: after kill -9 of the leader, how long after its lease expired did the
// new leader's first status write land? A standby judges the lease expired LeaseDuration
// after it last saw the record change, and the record's renewTime carries whole seconds
// (client-go's LeaderElectionRecord holds a metav1.Time, compared as JSON): the renewals
// sent within one second look the same to it. So the lease expires LeaseDuration after the
// first renewal the killed leader sent in the second of its last one (a renewal's
// renewTime is its clock at sending). The first write is the first guarded write (a status
// patch, a reservation delete) the other replica sent after the kill and the API accepted,
// timed by its answer.

// failoverWrite computes FaultResult.FailoverWrite of every kill -9 of the leader from the
// write logs' entries.
func failoverWrite(entries []writelog.Entry, faults []*FaultResult, leaseName string, lease time.Duration) {
	for _, f := range faults {
		if f.Kind != KillLeader.Kind || f.killed == "" {
			continue
		}
		var renewals []time.Time
		var first time.Time
		for _, e := range entries {
			if e.Start || !e.OK() {
				continue
			}
			res, _, name, _ := e.Resource()
			switch {
			case e.Replica == f.killed && res == "leases" && name == leaseName && e.Holder != "" && !e.Sent.After(f.killedAt):
				renewals = append(renewals, e.Sent)
			case e.Replica != f.killed && !e.Sent.Before(f.killedAt) && guardedWrite(e):
				if first.IsZero() || e.Time.Before(first) {
					first = e.Time
				}
			}
		}
		if len(renewals) == 0 || first.IsZero() {
			continue
		}
		slices.SortFunc(renewals, time.Time.Compare)
		f.FailoverWrite = first.Sub(seenRenewal(renewals, len(renewals)).Add(lease))
		f.failoverKnown = true
		f.note("new leader's first status write after the lease expired", f.FailoverWrite.Round(time.Millisecond).String())
	}
}

// seenRenewal is the renewal a standby's lease runs from when renewals[i-1] is a holder's
// last (renewals sorted, sent by one process): the first it sent in the whole second of
// renewals[i-1]. The lease's renewTime carries whole seconds, so the later ones of that
// second change nothing a standby sees.
func seenRenewal(renewals []time.Time, i int) time.Time {
	second := renewals[i-1].Truncate(time.Second)
	j := i - 1
	for j > 0 && renewals[j-1].Truncate(time.Second).Equal(second) {
		j--
	}
	return renewals[j]
}

// failoverSummary renders the failover figures of the run: min / median / max over the
// kills of the leader, or "" when none was measured. A write before the old lease expired
// (negative) does not meet the target: the fencing check reports it.
func failoverSummary(faults []*FaultResult) string {
	var ds []time.Duration
	for _, f := range faults {
		if f.failoverKnown {
			ds = append(ds, f.FailoverWrite)
		}
	}
	if len(ds) == 0 {
		return ""
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	parts := []string{dur(ds[0]), dur(ds[len(ds)/2]), dur(ds[len(ds)-1])}
	return fmt.Sprintf("- Failover (kill -9 of the leader, %d measured): the new leader's first status write landed %s (min / median / max) after the killed leader's lease expired; target <= 2 s: %s.\n",
		len(ds), strings.Join(parts, " / "), met(ds[0] >= 0 && ds[len(ds)-1] <= 2*time.Second))
}
