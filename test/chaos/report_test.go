package chaos

import (
	"strings"
	"testing"
	"time"
)

// TestRelistTarget_JudgesEvery410AgainstTheBareInformersOfTheSameRun: a cache equal within
// a second of the informers' relist meets the target, wherever the fault sits in client-go's
// backoff window; one later does not; informers that had not relisted by then meet it.
func TestRelistTarget_JudgesEvery410AgainstTheBareInformersOfTheSameRun(t *testing.T) {
	faults := []*FaultResult{
		{Seq: 1, Kind: Compaction410.Kind, cacheCorrectBy: 3 * time.Second, floorRelist: 2500 * time.Millisecond, floorSeen: true},
		{Seq: 2, Kind: APIRestart.Kind, Recovery: 9 * time.Second},
		{Seq: 3, Kind: Compaction410.Kind, cacheCorrectBy: 14 * time.Second, floorRelist: 13 * time.Second, floorSeen: true, apiFaultsBefore: 2},
		{Seq: 4, Kind: Compaction410.Kind, cacheCorrectBy: 2 * time.Second},
	}
	if got := relistTarget(faults); !strings.Contains(got, "3 of 3, met") {
		t.Errorf("within a second of the floor: %q", got)
	}
	faults[0].cacheCorrectBy = 3600 * time.Millisecond
	got := relistTarget(faults)
	for _, want := range []string{"2 of 3, NOT met", "worst: equal by 3.6s, informers relisted after 2.5s (fault #1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := relistTarget(faults[1:2]); !strings.Contains(got, "no 410 injected, NOT met") {
		t.Errorf("no 410: %q", got)
	}
}
