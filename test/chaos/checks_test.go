package chaos

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
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

// TestStatusesBehind_AReplicaThatHasNotAppliedTheLeadersExpiriesIsBehind: a reservation the
// API records Expired that the dump still shows Reserved is listed; a Matched one whose
// owner is only assumed, recorded Reserved, and one with no status yet are not.
func TestStatusesBehind_AReplicaThatHasNotAppliedTheLeadersExpiriesIsBehind(t *testing.T) {
	d := &Dump{
		Pods: map[string]PodDump{"ns/p": {State: "Assumed"}},
		Reservations: map[string]ReservationDump{
			"ns/expired": {Phase: "Reserved"},
			"ns/matched": {Phase: "Matched", Owner: "ns/p"},
			"ns/new":     {Phase: "Reserved"},
		},
	}
	rsv := func(name string, phase v1alpha1.ReservationPhase) v1alpha1.Reservation {
		r := v1alpha1.Reservation{}
		r.Namespace, r.Name, r.Status.Phase = "ns", name, phase
		return r
	}
	got := statusesBehind(d, []v1alpha1.Reservation{
		rsv("expired", v1alpha1.ReservationExpired), rsv("matched", v1alpha1.ReservationReserved), rsv("new", ""),
		rsv("gone", v1alpha1.ReservationReserved),
	})
	want := []string{"ns/expired (API Expired, cache Reserved)", "ns/gone (not in the cache)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestClassify_AViolationOfNoKnownDefectIsNotClassified: with no open defect, a
// replicas-disagree violation (D10's shape before its fix) fails like any other.
func TestClassify_AViolationOfNoKnownDefectIsNotClassified(t *testing.T) {
	v := Violation{Check: "replicas-disagree", Detail: `1 differences between the replicas' caches, e.g. reservation ns/q-715: a Reserved "", b Pending ""`}
	if got := classify(v); got != "" {
		t.Errorf("classified %q, want none", got)
	}
}
