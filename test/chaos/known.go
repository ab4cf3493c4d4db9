package chaos

// KnownDefect is an operator defect this suite found and docs/RELIABILITY.md records. Its
// violations are still reported (marked with the ID), but fail the test only with
// CHAOS_STRICT=true, so that `make test` stays green until the fix lands; a violation that
// matches no known defect always fails. Remove the entry with the fix.
type KnownDefect struct {
	ID, Summary string
	Matches     func(v Violation) bool
}

// KnownDefects are the open defects recorded in docs/RELIABILITY.md: none today (D1-D5 are
// fixed, and their violations fail the suite like any other). Keep the mechanism for the
// next one found.
var KnownDefects = []KnownDefect{}

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
