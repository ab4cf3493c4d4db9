package chaos

import (
	"strings"
	"testing"
	"time"
)

// TestRelistTarget_JudgesOnlyTheFirstAPIServerFaultInTheBackoffWindow: a 410 relist after
// other API server faults in the same 2 minutes waits out client-go's grown backoff; it is
// reported, not judged against the 5 s target.
func TestRelistTarget_JudgesOnlyTheFirstAPIServerFaultInTheBackoffWindow(t *testing.T) {
	faults := []*FaultResult{
		{Kind: Compaction410.Kind, Recovery: 3 * time.Second},
		{Kind: APIRestart.Kind, Recovery: 9 * time.Second, apiFaultsBefore: 1},
		{Kind: Compaction410.Kind, Recovery: 14 * time.Second, apiFaultsBefore: 2},
	}
	got := relistTarget(faults)
	for _, want := range []string{"1 such, max 3s, met", "later in client-go's backoff window (not judged): 1, max 14s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	faults[0].Recovery = 6 * time.Second
	if got := relistTarget(faults); !strings.Contains(got, "max 6s, NOT met") {
		t.Errorf("a first relist over 5 s: %q", got)
	}
	if got := relistTarget(faults[1:]); !strings.Contains(got, "0 such") || !strings.Contains(got, "NOT met") {
		t.Errorf("no first relist to judge: %q", got)
	}
}
