package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// TestOwnerProblem_AReplacementMayBeConsumedByAPodThatLandedSinceItsPredecessorWasDeleted:
// a Reservation that keeps a deleted pod's place is matched rightly by the namesake that
// landed after that deletion, even a second before the Reservation was created; an
// ordinary one is not.
func TestOwnerProblem_AReplacementMayBeConsumedByAPodThatLandedSinceItsPredecessorWasDeleted(t *testing.T) {
	deleted := time.Date(2026, 11, 28, 17, 21, 13, 0, time.UTC)
	created := deleted.Add(time.Second)
	for _, c := range []struct {
		name     string
		replaces bool
		want     string
	}{
		{"replacement", true, ""},
		{"ordinary", false, "before the reservation was created"},
	} {
		r := NewRecorder("lease")
		pod := newPod("ns", "web-0", "n-1", false, LabelSet, "web")
		pod.UID, pod.ResourceVersion, pod.CreationTimestamp = "pod-uid", "10", metav1.NewTime(deleted)
		r.record(pod, false, false)
		rsv := newReservation("ns", "web-0-abc", "n-1", 600, LabelSet, "web")
		rsv.UID, rsv.ResourceVersion, rsv.CreationTimestamp = "rsv-uid", "11", metav1.NewTime(created)
		if c.replaces {
			rsv.Annotations = map[string]string{v1alpha1.ReplacesSinceAnnotation: deleted.Format(time.RFC3339)}
		}
		r.record(rsv, false, false)
		hist := r.History()
		got := ownerProblem(hist, hist.Rsvs["rsv-uid"], &v1alpha1.PodReference{Namespace: "ns", Name: "web-0", UID: "pod-uid"}, 12)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCheckExpectations_AContendedPairWhoseNodeWentAwaitsIt: a contended pair whose node
// the workload deleted before they were placed there awaits it, neither Matched; the same
// pair Pending on a live node fails, and the failure names the node and the reasons.
func TestCheckExpectations_AContendedPairWhoseNodeWentAwaitsIt(t *testing.T) {
	awaiting := v1alpha1.ReservationStatus{Phase: v1alpha1.ReservationPending, Conditions: []metav1.Condition{{
		Type: v1alpha1.ReservationConditionReserved, Status: metav1.ConditionFalse, Reason: "NodeNotFound"}}}
	for _, c := range []struct {
		name        string
		nodeDeleted bool
		want        string
	}{
		{"node deleted", true, ""},
		{"node live", false, "on x-7, node deleted by the workload: false) end Pending (NodeNotFound)"},
	} {
		r := NewRecorder("lease")
		intents := map[string]RsvIntent{}
		for i, pair := range [][2]string{{"c-1-a", "c-1-b"}, {"c-1-b", "c-1-a"}} {
			rsv := newReservation("ns", pair[0], "x-7", 600, LabelContend, "c-1")
			rsv.UID, rsv.ResourceVersion, rsv.Status = types.UID(pair[0]), strconv.Itoa(10+i), awaiting
			r.record(rsv, false, false)
			intents[pair[0]] = RsvIntent{Name: pair[0], Class: "contend", Node: "x-7", Peer: pair[1], Target: "k-1", NodeDeleted: c.nodeDeleted}
		}
		var got []string
		checkExpectations(r.History(), "ns", intents, nil, time.Now(), func(_, format string, args ...any) {
			got = append(got, fmt.Sprintf(format, args...))
		})
		if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)) {
			t.Errorf("%s: got %q, want one failure containing %q", c.name, got, c.want)
		}
	}
}
