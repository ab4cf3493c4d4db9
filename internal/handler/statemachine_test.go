package handler

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// step is one pod event.
type step struct {
	op  stores.Op
	pod *corev1.Pod
}

// apply sends a pod event to the handler.
func (s step) apply(h *Handler) error {
	switch s.op {
	case stores.OpAssume:
		return h.AssumePod(s.pod)
	case stores.OpFinishBinding:
		return h.FinishBinding(s.pod)
	case stores.OpForget:
		return h.ForgetPod(s.pod)
	case stores.OpAdd:
		return h.Add(s.pod)
	case stores.OpUpdate:
		return h.Update(s.pod, s.pod)
	case stores.OpDelete:
		return h.Delete(s.pod)
	}
	panic("unknown op " + s.op)
}

var (
	unbound    = ts.MakePod("ns", "p", ts.Requests("1", "1Gi"))
	onN1       = ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"))
	onN1v2     = ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("2", "1Gi"), ts.WithResourceVersion("2"))
	onN2       = ts.MakePod("ns", "p", ts.OnNode("n2"), ts.Requests("1", "1Gi"))
	otherUID   = ts.MakePod("ns", "p", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.WithUID("recreated"))
	unboundUID = ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.WithUID("recreated"))
	noName     = ts.MakePod("ns", "", ts.OnNode("n1"))
)

// Starting points of the state machine.
var (
	fromInitial      []step
	fromAssumed      = []step{{stores.OpAssume, onN1}}
	fromBinding      = []step{{stores.OpAssume, onN1}, {stores.OpFinishBinding, onN1}}
	fromAddedUnbound = []step{{stores.OpAdd, unbound}}
	fromAddedBound   = []step{{stores.OpAdd, onN1}}
	fromAssumedAfter = []step{{stores.OpAdd, unbound}, {stores.OpAssume, onN1}}
)

// TestStateMachine_EveryTransition drives every (state, event) pair of the assumed-pod
// state machine, valid and invalid, and checks the resulting state, where the pod is
// charged, and that a rejected event leaves every store as it was.
func TestStateMachine_EveryTransition(t *testing.T) {
	cases := []struct {
		name    string
		from    []step
		event   step
		wantErr error
		// wantState is the pod's state after the event ("" = not in the cache), wantNode the
		// node it is charged to ("" = none).
		wantState store.PodState
		wantNode  string
	}{
		// From Initial.
		{"initial assume", fromInitial, step{stores.OpAssume, onN1}, nil, store.PodAssumed, "n1"},
		{"initial assume without node", fromInitial, step{stores.OpAssume, unbound}, store.ErrInvalidObject, "", ""},
		{"initial add bound", fromInitial, step{stores.OpAdd, onN1}, nil, store.PodAdded, "n1"},
		{"initial add unbound", fromInitial, step{stores.OpAdd, unbound}, nil, store.PodAdded, ""},
		{"initial finish binding", fromInitial, step{stores.OpFinishBinding, onN1}, store.ErrPodNotAssumed, "", ""},
		{"initial forget", fromInitial, step{stores.OpForget, onN1}, store.ErrPodNotAssumed, "", ""},
		{"initial update", fromInitial, step{stores.OpUpdate, onN1}, store.ErrPodUnknown, "", ""},
		{"initial delete", fromInitial, step{stores.OpDelete, onN1}, store.ErrPodUnknown, "", ""},
		{"initial add without name", fromInitial, step{stores.OpAdd, noName}, store.ErrInvalidObject, "", ""},

		// From Assumed.
		{"assumed assume again", fromAssumed, step{stores.OpAssume, onN1}, store.ErrPodAlreadyAssumed, store.PodAssumed, "n1"},
		{"assumed finish binding", fromAssumed, step{stores.OpFinishBinding, onN1}, nil, store.PodAssumed, "n1"},
		{"assumed forget", fromAssumed, step{stores.OpForget, onN1}, nil, "", ""},
		{"assumed forget on another node", fromAssumed, step{stores.OpForget, onN2}, store.ErrNodeMismatch, store.PodAssumed, "n1"},
		{"assumed confirmed by add", fromAssumed, step{stores.OpAdd, onN1v2}, nil, store.PodAdded, "n1"},
		{"assumed confirmed on another node", fromAssumed, step{stores.OpAdd, onN2}, nil, store.PodAdded, "n2"},
		{"assumed add unbound copy", fromAssumed, step{stores.OpAdd, unbound}, nil, store.PodAssumed, "n1"},
		{"assumed update bound", fromAssumed, step{stores.OpUpdate, onN1v2}, store.ErrPodAssumedNotConfirmed, store.PodAssumed, "n1"},
		{"assumed update unbound copy", fromAssumed, step{stores.OpUpdate, unbound}, nil, store.PodAssumed, "n1"},
		{"assumed delete", fromAssumed, step{stores.OpDelete, onN1}, nil, "", ""},
		{"assumed delete on another node", fromAssumed, step{stores.OpDelete, onN2}, store.ErrNodeMismatch, store.PodAssumed, "n1"},
		{"assumed event of a recreated pod", fromAssumed, step{stores.OpAdd, otherUID}, store.ErrUIDMismatch, store.PodAssumed, "n1"},

		// From Assumed with binding finished.
		{"binding forget", fromBinding, step{stores.OpForget, onN1}, nil, "", ""},
		{"binding confirmed", fromBinding, step{stores.OpAdd, onN1}, nil, store.PodAdded, "n1"},
		{"binding finish again", fromBinding, step{stores.OpFinishBinding, onN1}, nil, store.PodAssumed, "n1"},

		// From Added, not bound.
		{"added unbound assume", fromAddedUnbound, step{stores.OpAssume, onN1}, nil, store.PodAssumed, "n1"},
		{"added unbound add again", fromAddedUnbound, step{stores.OpAdd, unbound}, store.ErrPodAlreadyAdded, store.PodAdded, ""},
		{"added unbound bound by update", fromAddedUnbound, step{stores.OpUpdate, onN1}, nil, store.PodAdded, "n1"},
		{"added unbound forget", fromAddedUnbound, step{stores.OpForget, unbound}, store.ErrPodNotAssumed, store.PodAdded, ""},
		{"added unbound finish binding", fromAddedUnbound, step{stores.OpFinishBinding, unbound}, store.ErrPodNotAssumed, store.PodAdded, ""},
		{"added unbound delete", fromAddedUnbound, step{stores.OpDelete, unbound}, nil, "", ""},
		{"added unbound recreated", fromAddedUnbound, step{stores.OpUpdate, unboundUID}, store.ErrUIDMismatch, store.PodAdded, ""},

		// From Added, bound.
		{"added assume", fromAddedBound, step{stores.OpAssume, onN1}, store.ErrPodAlreadyAdded, store.PodAdded, "n1"},
		{"added add again", fromAddedBound, step{stores.OpAdd, onN1}, store.ErrPodAlreadyAdded, store.PodAdded, "n1"},
		{"added update", fromAddedBound, step{stores.OpUpdate, onN1v2}, nil, store.PodAdded, "n1"},
		{"added update to another node", fromAddedBound, step{stores.OpUpdate, onN2}, store.ErrNodeMismatch, store.PodAdded, "n1"},
		{"added forget", fromAddedBound, step{stores.OpForget, onN1}, store.ErrPodNotAssumed, store.PodAdded, "n1"},
		{"added finish binding", fromAddedBound, step{stores.OpFinishBinding, onN1}, store.ErrPodNotAssumed, store.PodAdded, "n1"},
		{"added delete", fromAddedBound, step{stores.OpDelete, onN1}, nil, "", ""},
		{"added delete from another node", fromAddedBound, step{stores.OpDelete, onN2}, store.ErrNodeMismatch, store.PodAdded, "n1"},
		{"added delete of a recreated pod", fromAddedBound, step{stores.OpDelete, otherUID}, store.ErrUIDMismatch, store.PodAdded, "n1"},

		// Assumed after the API reported the pod unbound: forget returns to that copy.
		{"assumed-from-unbound forget", fromAssumedAfter, step{stores.OpForget, onN1}, nil, store.PodAdded, ""},
		{"assumed-from-unbound confirmed", fromAssumedAfter, step{stores.OpAdd, onN1}, nil, store.PodAdded, "n1"},
		{"assumed-from-unbound delete", fromAssumedAfter, step{stores.OpDelete, onN1}, nil, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHandler(t)
			must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
			must(t, h.Add(ts.MakeNode("n2", "8", "16Gi")))
			for _, s := range tc.from {
				must(t, s.apply(h))
			}
			before := dumpJSON(t, h)
			err := tc.event.apply(h)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("want success, got %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("want %v, got %v", tc.wantErr, err)
			case tc.wantErr != nil:
				var ee *stores.EventError
				if !errors.As(err, &ee) || ee.Kind != stores.KindPod || ee.Op != tc.event.op {
					t.Errorf("error is not an EventError for %s %s: %#v", tc.event.op, stores.KindPod, err)
				}
				if after := dumpJSON(t, h); after != before {
					t.Errorf("a rejected event changed the cache:\nbefore %s\nafter  %s", before, after)
				}
			}
			key := types.NamespacedName{Namespace: "ns", Name: "p"}
			st, ok := h.PodState(key)
			if got := map[bool]store.PodState{true: st.State}[ok]; got != tc.wantState {
				t.Errorf("state %q, want %q", got, tc.wantState)
			}
			for _, node := range []string{"n1", "n2"} {
				info, _ := h.NodeInfo(node)
				charged := len(info.Pods) == 1
				if charged != (node == tc.wantNode) {
					t.Errorf("pod charged to %s: %v, want it charged to %q", node, charged, tc.wantNode)
				}
			}
			checkInvariants(t, h)
		})
	}
}

// TestStateMachine_RejectionsAreCountedAndLoggedOnce checks that an invalid event is
// counted in multicache_events_total with its reason.
func TestStateMachine_RejectionsAreCounted(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.AssumePod(onN1))
	before := eventsTotal(t, "Pod", "assume", "already_assumed")
	for range 3 {
		if err := h.AssumePod(onN1); !errors.Is(err, store.ErrPodAlreadyAssumed) {
			t.Fatalf("want ErrPodAlreadyAssumed, got %v", err)
		}
	}
	if got := eventsTotal(t, "Pod", "assume", "already_assumed") - before; got != 3 {
		t.Errorf("counted %v rejections, want 3", got)
	}
	if len(h.rejections) != 1 {
		t.Errorf("logged %d distinct rejections at info level, want 1", len(h.rejections))
	}
}

// TestStateMachine_NilAndMismatchedPodsAreRejected covers calls a sibling controller could
// get wrong.
func TestStateMachine_NilAndMismatchedPodsAreRejected(t *testing.T) {
	h, _ := newHandler(t)
	for name, err := range map[string]error{
		"nil add":              h.Add(nil),
		"nil assume":           h.AssumePod(nil),
		"update of two pods":   h.Update(ts.MakePod("ns", "a"), ts.MakePod("ns", "b")),
		"nil node":             h.Add(nil),
		"update of two nodes":  h.Update(ts.MakeNode("a", "1", "1Gi"), ts.MakeNode("b", "1", "1Gi")),
		"delete unknown node":  h.Delete(ts.MakeNode("a", "1", "1Gi")),
		"nil reservation":      h.Delete(nil),
		"update unknown group": h.Update(ts.MakePodGroup("ns", "g", 1), ts.MakePodGroup("ns", "g", 2)),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if !errors.Is(err, store.ErrInvalidObject) && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: untyped error %v", name, err)
		}
	}
	if _, err := h.GetPod(onN1); !errors.Is(err, store.ErrPodUnknown) {
		t.Errorf("GetPod of an unknown pod: %v", err)
	}
	must(t, h.Add(ts.MakeNode("a", "1", "1Gi")))
	if err := h.Add(ts.MakeNode("a", "1", "1Gi")); !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("adding a node twice: %v", err)
	}
	checkInvariants(t, h)
}
