package chaos

// KnownDefect is an operator defect this suite found and docs/RELIABILITY.md records. Its
// violations are still reported (marked with the ID), but fail the test only with
// CHAOS_STRICT=true, so that `make test` stays green until the fix lands; a violation that
// matches no known defect always fails. Remove the entry with the fix.
type KnownDefect struct {
	ID      string
	Matches func(v Violation) bool
}

// KnownDefects are the open defects recorded in docs/RELIABILITY.md: none (D1-D10 are
// fixed, and their violations fail the suite like any other). A new one gets an entry here
// with a Matches narrow enough to catch only its own violations.
var KnownDefects []KnownDefect

// classify returns the ID of the known defect a violation is an instance of, or "".
func classify(v Violation) string {
	for _, d := range KnownDefects {
		if d.Matches(v) {
			return d.ID
		}
	}
	return ""
}
