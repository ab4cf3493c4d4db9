package chaos

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
