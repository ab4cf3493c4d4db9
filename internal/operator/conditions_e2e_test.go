package operator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// waitForCondition waits, as `kubectl wait --for=condition=<type>=<status>` does, through a
// watch of one object, until its status.conditions hold conditionType with status, and
// returns that condition.
func waitForCondition(t *testing.T, list client.ObjectList, ns, name, conditionType string, status metav1.ConditionStatus) metav1.Condition {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := c.Watch(ctx, list, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var last []metav1.Condition
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended before %s/%s had %s=%s; last conditions %+v", ns, name, conditionType, status, last)
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			var conds []metav1.Condition
			switch o := ev.Object.(type) {
			case *v1alpha1.Reservation:
				conds = o.Status.Conditions
			case *v1alpha1.PodGroup:
				conds = o.Status.Conditions
			}
			last = conds
			if cond := meta.FindStatusCondition(conds, conditionType); cond != nil && cond.Status == status {
				return *cond
			}
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s/%s to have %s=%s; last conditions %+v", ns, name, conditionType, status, last)
		}
	}
}

// eventReasons lists the reasons of the Events about one object.
func eventReasons(t *testing.T, ns, name string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

func TestConditions_ReservationReservedMatchedExpiredAndAnEventForEach(t *testing.T) {
	startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("cond-rsv-node", "8", "16Gi")))
	create(t, ts.MakeReservation(ns, "hold", "cond-rsv-node", "2", "4Gi", "app", "web"))
	reserved := waitForCondition(t, &v1alpha1.ReservationList{}, ns, "hold", v1alpha1.ReservationConditionReserved, metav1.ConditionTrue)
	if reserved.Reason != "Placed" || reserved.Message == "" {
		t.Errorf("Reserved condition %+v", reserved)
	}
	pod := withoutUID(ts.MakePod(ns, "web-1", ts.OnNode("cond-rsv-node"), ts.Requests("2", "4Gi"), ts.WithLabels("app", "web")))
	create(t, pod)
	matched := waitForCondition(t, &v1alpha1.ReservationList{}, ns, "hold", v1alpha1.ReservationConditionMatched, metav1.ConditionTrue)
	if matched.Reason != "PodBound" || matched.Message != "consumed by pod "+ns+"/web-1 on node cond-rsv-node" {
		t.Errorf("Matched condition %+v", matched)
	}
	waitForCondition(t, &v1alpha1.ReservationList{}, ns, "hold", v1alpha1.ReservationConditionReserved, metav1.ConditionFalse)

	short := ts.MakeReservation(ns, "short", "cond-rsv-node", "1", "1Gi", "app", "db")
	short.Spec.TTLSeconds = ptr.To[int64](1)
	create(t, short)
	expired := waitForCondition(t, &v1alpha1.ReservationList{}, ns, "short", v1alpha1.ReservationConditionExpired, metav1.ConditionTrue)
	if expired.Reason != "TTLExpired" {
		t.Errorf("Expired condition %+v", expired)
	}
	eventually(t, "an event for each phase", func() (bool, string) {
		hold, short := eventReasons(t, ns, "hold"), eventReasons(t, ns, "short")
		ok := slices.Contains(hold, "Reserved") && slices.Contains(hold, "Matched") && slices.Contains(short, "Reserved") && slices.Contains(short, "Expired")
		return ok, fmt.Sprintf("hold %v, short %v", hold, short)
	})
	deleteNow(t, pod)
}

func TestConditions_PodGroupScheduledRunningTimedOut(t *testing.T) {
	startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("cond-pg-node", "32", "64Gi")))
	create(t, ts.MakePodGroup(ns, "gang", 2))
	waiting := waitForCondition(t, &v1alpha1.PodGroupList{}, ns, "gang", v1alpha1.PodGroupConditionScheduled, metav1.ConditionFalse)
	if waiting.Reason != "WaitingForMembers" || waiting.Message != "0 of 2 members placed" {
		t.Errorf("Scheduled condition of an empty gang %+v", waiting)
	}
	var pods []*corev1.Pod
	for i := range 2 {
		p := withoutUID(ts.MakePod(ns, fmt.Sprintf("m-%d", i), ts.InGroup("gang"), ts.OnNode("cond-pg-node")))
		create(t, p)
		pods = append(pods, p)
	}
	waitForCondition(t, &v1alpha1.PodGroupList{}, ns, "gang", v1alpha1.PodGroupConditionScheduled, metav1.ConditionTrue)
	for _, p := range pods {
		setPhase(t, p, corev1.PodRunning)
	}
	running := waitForCondition(t, &v1alpha1.PodGroupList{}, ns, "gang", v1alpha1.PodGroupConditionRunning, metav1.ConditionTrue)
	if running.Reason != "MinMemberRunning" {
		t.Errorf("Running condition %+v", running)
	}

	lonely := ts.MakePodGroup(ns, "lonely", 2)
	lonely.Spec.ScheduleTimeoutSeconds = ptr.To[int32](1)
	create(t, lonely)
	timedOut := waitForCondition(t, &v1alpha1.PodGroupList{}, ns, "lonely", v1alpha1.PodGroupConditionTimedOut, metav1.ConditionTrue)
	if timedOut.Reason != "ScheduleTimeout" || timedOut.Message != "the schedule timeout passed with 0 of 2 members placed" {
		t.Errorf("TimedOut condition %+v", timedOut)
	}
	eventually(t, "an event for each phase", func() (bool, string) {
		gang, lone := eventReasons(t, ns, "gang"), eventReasons(t, ns, "lonely")
		ok := slices.Contains(gang, "Scheduled") && slices.Contains(gang, "Running") && slices.Contains(lone, "Timeout")
		return ok, fmt.Sprintf("gang %v, lonely %v", gang, lone)
	})
	deleteNow(t, pods[0], pods[1])
}
