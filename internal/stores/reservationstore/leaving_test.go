package reservationstore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestKeepsPlaceFor_NamesTheTerminatingPodsWhosePlaceTheReplacementWillTake: a scheduler
// places a replacement while its predecessor still terminates, before any hold exists. The
// predecessor's place is to be kept for the replacement when the predecessor asks for it
// (on itself or through its ReplicaSet), is bound, and its hold would select the
// replacement; in every other case, and for bad input, the answer is no.
func TestKeepsPlaceFor_NamesTheTerminatingPodsWhosePlaceTheReplacementWillTake(t *testing.T) {
	deleting := func(p *corev1.Pod) *corev1.Pod {
		now := metav1.NewTime(t0)
		p.DeletionTimestamp = &now
		return p
	}
	replacement := web("web-new", "v1", t0)
	replacement.Spec.NodeName = ""
	other := ts.MakePod("ns", "db", ts.WithLabels("app", "db"), ts.Requests("1", "1Gi"))
	elsewhere := web("web-new", "v1", t0)
	elsewhere.Namespace = "other"

	cases := []struct {
		name           string
		leaving, pod   *corev1.Pod
		ownerAnnotated bool
		want           bool
	}{
		{"annotated on the pod", deleting(web("web-a", "v1", t0, kept())), replacement, false, true},
		{"annotated on its ReplicaSet", deleting(web("web-a", "v1", t0)), replacement, true, true},
		{"of another revision", deleting(web("web-a", "v0", t0, kept())), replacement, false, true},
		{"not annotated", deleting(web("web-a", "v1", t0)), replacement, false, false},
		{"annotated false", deleting(web("web-a", "v1", t0, ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "false"))), replacement, false, false},
		{"annotated with no boolean", deleting(web("web-a", "v1", t0, ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "yes please"))), replacement, false, false},
		{"removed from the API already (no deletionTimestamp seen)", web("web-a", "v1", t0, kept()), replacement, false, true},
		{"not bound", deleting(ts.MakePod("ns", "web-a", ts.Requests("2", "4Gi"), ts.WithLabels("app", "web"), kept())), replacement, false, false},
		{"not selected", deleting(web("web-a", "v1", t0, kept())), other, false, false},
		{"another namespace", deleting(web("web-a", "v1", t0, kept())), elsewhere, false, false},
		{"itself", deleting(web("web-a", "v1", t0, kept())), deleting(web("web-a", "v1", t0, kept())), false, false},
		{"no leaving pod", nil, replacement, false, false},
		{"no pod", deleting(web("web-a", "v1", t0, kept())), nil, false, false},
		{"on a node that is gone", deleting(web("web-a", "v1", t0, kept(), ts.OnNode("gone"))), replacement, false, false},
		{"requesting nothing to hold", deleting(web("web-a", "v1", t0, kept(), ts.Requests("0", "0"))), replacement, false, false},
	}
	for _, tc := range cases {
		c := newCluster(t)
		if tc.ownerAnnotated {
			c.replicaSet(1)
		}
		if got := c.h.KeepsPlaceFor(tc.leaving, tc.pod); got != tc.want {
			t.Errorf("%s: KeepsPlaceFor = %v, want %v", tc.name, got, tc.want)
		}
	}
}
