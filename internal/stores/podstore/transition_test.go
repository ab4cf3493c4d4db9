package podstore

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestTransitions_TableIsComplete checks that every (event, state) pair has a rule and that
// the table rejects exactly the pairs the state diagram leaves out.
func TestTransitions_TableIsComplete(t *testing.T) {
	rejected := map[stores.Op][numPhases]error{
		stores.OpAssume:        {nil, store.ErrPodAlreadyAssumed, nil, store.ErrPodAlreadyAdded},
		stores.OpFinishBinding: {store.ErrPodNotAssumed, nil, store.ErrPodNotAssumed, store.ErrPodNotAssumed},
		stores.OpForget:        {store.ErrPodNotAssumed, nil, store.ErrPodNotAssumed, store.ErrPodNotAssumed},
		stores.OpAdd:           {nil, nil, store.ErrPodAlreadyAdded, store.ErrPodAlreadyAdded},
		stores.OpUpdate:        {store.ErrPodUnknown, store.ErrPodAssumedNotConfirmed, nil, nil}, // the event pod is bound
		stores.OpDelete:        {store.ErrPodUnknown, nil, nil, nil},
	}
	if len(transitions) != len(rejected) {
		t.Fatalf("%d events in the table, %d expected", len(transitions), len(rejected))
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	current := map[phase]*Entry{
		phaseInitial:      nil,
		phaseAssumed:      {PodStatus: store.PodStatus{State: store.PodAssumed, Pod: pod}},
		phaseAddedUnbound: {PodStatus: store.PodStatus{State: store.PodAdded, Pod: &corev1.Pod{ObjectMeta: pod.ObjectMeta}}},
		phaseAddedBound:   {PodStatus: store.PodStatus{State: store.PodAdded, Pod: pod}},
	}
	for op, byPhase := range rejected {
		for ph := phaseInitial; ph < numPhases; ph++ {
			if phaseOf(current[ph]) != ph {
				t.Fatalf("fixture for phase %d is in phase %d", ph, phaseOf(current[ph]))
			}
			rule := transitions[op][ph]
			if rule == nil {
				t.Errorf("%s in phase %d: no rule", op, ph)
				continue
			}
			_, err := rule(current[ph], pod, time.Time{}, time.Minute)
			if want := byPhase[ph]; (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
				t.Errorf("%s in phase %d: got %v, want %v", op, ph, err, want)
			}
		}
	}
}

// TestFinishBinding_SetsTheDeadlineFromTheTTL checks the expiry clock starts at
// FinishBinding, not at Assume.
func TestFinishBinding_SetsTheDeadlineFromTheTTL(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step, err := finishBinding(&Entry{PodStatus: store.PodStatus{State: store.PodAssumed, Pod: pod}}, pod, now, 30*time.Second)
	if err != nil || !step.Next.BindingFinished || !step.Next.Deadline.Equal(now.Add(30*time.Second)) || step.Op != "" {
		t.Errorf("step %+v, err %v", step, err)
	}
}
