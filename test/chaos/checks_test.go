package chaos

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestDoubleConsumed_PodsOfOneNameAreToldApartByUID: Matched reservations of one owner name
// are a double consumption only when the API records the same owner UID for them.
func TestDoubleConsumed_PodsOfOneNameAreToldApartByUID(t *testing.T) {
	d := &Dump{Reservations: map[string]ReservationDump{
		"ns/web-0-a": {Phase: "Matched", Owner: "ns/web-0"},
		"ns/web-0-b": {Phase: "Matched", Owner: "ns/web-0"},
		"ns/other":   {Phase: "Reserved"},
	}}
	if got := doubleConsumed("a", d, map[string]types.UID{"ns/web-0-a": "uid-1", "ns/web-0-b": "uid-2"}); len(got) != 0 {
		t.Errorf("two incarnations of web-0, one reservation each: %q", got)
	}
	if got := doubleConsumed("a", d, map[string]types.UID{"ns/web-0-a": "uid-1", "ns/web-0-b": "uid-1"}); len(got) != 1 {
		t.Errorf("one pod holding two reservations: got %q, want one problem", got)
	}
}
