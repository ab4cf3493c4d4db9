package nodestore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The snapshot answers what each pod was charged, for the very objects it holds, through
// adds, removals (a node's list is reordered) and updates that change the requests.
func TestSnapshot_PodChargeIsWhatTheNodeWasChargedForThatPod(t *testing.T) {
	s := newStore(t)
	s.AddNode(ts.MakeNode("a", "8", "16Gi"))
	p := ts.MakePod("ns", "p", ts.OnNode("a"), ts.Requests("1", "1Gi"))
	q := ts.MakePod("ns", "q", ts.OnNode("a"), ts.Requests("2", "2Gi"))
	r := ts.MakePod("ns", "r", ts.OnNode("a"), ts.Requests("3", "3Gi"))
	for _, pod := range []*corev1.Pod{p, q, r} {
		s.AddPod(pod)
	}
	snap := s.NewSnapshot(store.SnapshotOptions{}).(*nodestore.Snapshot)
	s.UpdateSnapshot(snap, 0)
	at := config.Generations().Current()

	s.DeletePod(p) // r takes p's place in the node's list
	resized := ts.MakePod("ns", "q", ts.OnNode("a"), ts.Requests("4", "4Gi"))
	s.UpdatePod(q, resized)
	s.UpdateSnapshot(snap, at)

	// q's old object finds the object the node holds for q now.
	for _, tc := range []struct {
		pod, want *corev1.Pod
	}{{p, nil}, {q, resized}, {resized, resized}, {r, r}} {
		held, req, ok := snap.PodCharge("a", tc.pod)
		if ok != (tc.want != nil) || held != tc.want {
			t.Errorf("PodCharge(a, %s) holds %v (%v), want %v", tc.pod.Name, held, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		if want := config.Accounting().PodRequests(tc.want); !req.Equal(want) {
			t.Errorf("PodCharge(a, %s) = %+v, want the pod's requests %+v", tc.pod.Name, req, want)
		}
	}
	if _, _, ok := snap.PodCharge("nowhere", r); ok {
		t.Error("PodCharge answers for a node the snapshot does not hold")
	}
}
