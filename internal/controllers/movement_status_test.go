package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// fixedMovement answers Movement from a fixed view.
type fixedMovement struct {
	view store.Movement
}

func (r *fixedMovement) Movement(string) (store.Movement, bool) { return r.view, true }

// TestMovementStatus_ConditionsAndEventsSayWhetherPodsFollowedIt walks a movement through
// its states: no pod, pods that label instead of annotate (a Warning once), one pod landed
// (Followed, an Event), every suggestion met (Complete, an Event).
func TestMovementStatus_ConditionsAndEventsSayWhetherPodsFollowedIt(t *testing.T) {
	owner := v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}
	m := &v1alpha1.Movement{ObjectMeta: metav1.ObjectMeta{Name: "mv", UID: types.UID("mv-uid"), Generation: 1}}
	labelled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-labelled",
		Labels: map[string]string{v1alpha1.MovementNameAnnotation: "mv"}}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(m).WithStatusSubresource(m).Build()
	rec := events.NewFakeRecorder(10)
	reader := &fixedMovement{}
	r := &MovementStatusReconciler{Client: c, Reader: reader, ComponentName: "multicache",
		Clock: clocktesting.NewFakePassiveClock(time.Unix(1e9, 0)), Recorder: rec}
	ctx := context.Background()

	step := func(name string, view store.Movement, followed, complete metav1.ConditionStatus, reason string, wantEvents ...string) {
		t.Helper()
		view.Name, view.Movement = "mv", m
		reader.view = view
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "mv"}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := &v1alpha1.Movement{}
		if err := c.Get(ctx, client.ObjectKey{Name: "mv"}, got); err != nil {
			t.Fatal(err)
		}
		f := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.MovementConditionFollowed)
		done := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.MovementConditionComplete)
		if f == nil || done == nil || f.Status != followed || done.Status != complete || f.Reason != reason {
			t.Errorf("%s: conditions %+v, want Followed=%s (%s), Complete=%s", name, got.Status.Conditions, followed, reason, complete)
		}
		var gotEvents []string
		for len(rec.Events) > 0 {
			gotEvents = append(gotEvents, <-rec.Events)
		}
		if len(gotEvents) != len(wantEvents) {
			t.Errorf("%s: events %q, want %d: %q", name, gotEvents, len(wantEvents), wantEvents)
			return
		}
		for i, w := range wantEvents {
			if !strings.Contains(gotEvents[i], w) {
				t.Errorf("%s: event %q, want it to say %q", name, gotEvents[i], w)
			}
		}
	}
	suggest := func(actual int) store.Movement {
		n := store.MovementNode{Node: "node-a", Desired: 2}
		for i := range actual {
			n.Actual = append(n.Actual, v1alpha1.TaskInfo{Namespace: "ns", Name: "web-" + string(rune('a'+i)), Node: "node-a"})
		}
		return store.Movement{Owners: []store.MovementOwner{{Owner: owner, Nodes: []store.MovementNode{n}}}}
	}

	step("no pod yet", suggest(0), metav1.ConditionFalse, metav1.ConditionFalse, "NoPodYet")
	if err := c.Create(ctx, labelled); err != nil {
		t.Fatal(err)
	}
	step("a pod labels it", suggest(0), metav1.ConditionFalse, metav1.ConditionFalse, reasonLabelNotAnnotation,
		"Warning LabelNotAnnotation pods ns/web-labelled carry multicache.dev/movement-name as a label, which is ignored: set it as an annotation")
	step("the same again: no second warning", suggest(0), metav1.ConditionFalse, metav1.ConditionFalse, reasonLabelNotAnnotation)
	step("one pod landed", suggest(1), metav1.ConditionTrue, metav1.ConditionFalse, "PodsLanded", "Normal Followed")
	step("both landed", suggest(2), metav1.ConditionTrue, metav1.ConditionTrue, "PodsLanded", "Normal Complete 2 of 2 suggested pods landed")
}
