package chaos

import "strings"

// KnownDefect is an operator defect this suite found and docs/RELIABILITY.md records. Its
// violations are still reported (marked with the ID), but fail the test only with
// CHAOS_STRICT=true, so that `make test` stays green until the fix lands; a violation that
// matches no known defect always fails. Remove the entry with the fix.
type KnownDefect struct {
	ID, Summary string
	Matches     func(v Violation) bool
}

// KnownDefects are the defects recorded in docs/RELIABILITY.md.
var KnownDefects = []KnownDefect{
	{
		ID: "D1",
		Summary: "a leader SIGSTOPped past its lease keeps writing status after SIGCONT, for up to --renew-deadline, " +
			"from a stale cache, while the other replica leads (no fencing of status writes)",
		Matches: func(v Violation) bool {
			return (v.Check == "fencing" || v.Check == "false-status") && strings.Contains(v.Detail, lateByPausedLeader)
		},
	},
	{
		ID: "D2",
		Summary: "a replica that places a reservation it already knew (its node set by an update, or seen before the " +
			"leader wrote its status) takes reservedAt from its own clock instead of status.reservedAt: replicas " +
			"disagree on reservedAt/expiresAt, and a new leader rewrites them (and may write Reserved over Expired)",
		Matches: func(v Violation) bool {
			switch v.Check {
			case "replicas-disagree":
				return strings.HasPrefix(v.Detail, reservedAtOnly)
			case "false-status":
				return !strings.Contains(v.Detail, lateByPausedLeader) && !strings.Contains(v.Detail, "did not hold the lease") &&
					(strings.Contains(v.Detail, "reservedAt moved") || strings.Contains(v.Detail, "with another reservedAt"))
			}
			return false
		},
	},
	{
		ID: "D3",
		Summary: "a replica that starts while the API server restarts (and objects are created and deleted) can stay " +
			"not ready for good: its catch-up waits for an initial key that no reconcile ever counts, although its cache " +
			"equals the API",
		Matches: func(v Violation) bool {
			return v.Check == "not-ready" && strings.Contains(v.Detail, "initial objects not applied") &&
				strings.Contains(v.Detail, "against the API: 0 differences")
		},
	},
	{
		ID: "D4",
		Summary: "settling a node re-matches every pod on it against every open reservation at each change: a burst of " +
			"reservations on few nodes keeps the reservation feed minutes behind",
		Matches: func(v Violation) bool {
			return v.Check == "compare" && strings.Contains(v.Fault, Burst.Kind) &&
				strings.Contains(v.Detail, "Reservation ") && strings.Contains(v.Detail, "missing from cache")
		},
	},
	{
		ID: "D5",
		Summary: "a leader that exits after losing its lease (--leader-elect, LeaderElectionReleaseOnCancel) releases the " +
			"lease its successor already holds: for a moment nobody holds it (client-go's tryRelease decides on its stale record)",
		Matches: func(v Violation) bool {
			return v.Check == "fencing" && strings.Contains(v.Detail, staleRelease)
		},
	},
}

// reservedAtOnly starts a replicas-disagree detail whose every difference comes from the
// replicas' reservedAt (reservedAtSplit).
const reservedAtOnly = "only reservedAt differs (each replica's own clock): "

// classify returns the ID of the known defect a violation is an instance of, or "".
func classify(v Violation) string {
	for _, d := range KnownDefects {
		if d.Matches(v) {
			return d.ID
		}
	}
	return ""
}
