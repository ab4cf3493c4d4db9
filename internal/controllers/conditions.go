package controllers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// setConditions returns cur with each of conds set (a copy: cur is not modified). A
// condition whose status does not change keeps its lastTransitionTime; one that does gets
// now, in whole seconds as the API keeps it.
func setConditions(cur []metav1.Condition, generation int64, now time.Time, conds ...metav1.Condition) []metav1.Condition {
	out := append([]metav1.Condition(nil), cur...)
	for _, c := range conds {
		c.ObservedGeneration = generation
		c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		meta.SetStatusCondition(&out, c)
	}
	return out
}

func condition(conditionType string, ok bool, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message}
}

// reservationConditions says, for a reservation's phase, why it is or is not Reserved,
// Matched and Expired.
func reservationConditions(st v1alpha1.ReservationStatus, node string) []metav1.Condition {
	switch st.Phase {
	case v1alpha1.ReservationReserved:
		expires := "never"
		if st.ExpiresAt != nil {
			expires = st.ExpiresAt.UTC().Format(time.RFC3339)
		}
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, true, "Placed", fmt.Sprintf("resources held on node %s until %s", node, expires)),
			condition(v1alpha1.ReservationConditionMatched, false, "NoPodYet", "no pod the API bound to the node has consumed it yet"),
			condition(v1alpha1.ReservationConditionExpired, false, "WithinTTL", "the TTL has not run out"),
		}
	case v1alpha1.ReservationMatched:
		owner := "a pod"
		if o := st.CurrentOwner; o != nil {
			owner = "pod " + o.Namespace + "/" + o.Name
		}
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, false, "Consumed", "the resources went to "+owner+"; nothing is held for it any more"),
			condition(v1alpha1.ReservationConditionMatched, true, "PodBound", "consumed by "+owner+" on node "+node),
			condition(v1alpha1.ReservationConditionExpired, false, "Matched", "matched before its TTL ran out"),
		}
	case v1alpha1.ReservationExpired:
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, false, "Expired", "the TTL ran out; the resources on node "+node+" were released"),
			condition(v1alpha1.ReservationConditionMatched, false, "Expired", "no matching pod landed on node "+node+" within the TTL"),
			condition(v1alpha1.ReservationConditionExpired, true, "TTLExpired", "no matching pod within the TTL; resources released"),
		}
	default: // Pending
		return []metav1.Condition{
			condition(v1alpha1.ReservationConditionReserved, false, "NoNode", "spec.nodeName is empty: nothing is held until a node is named"),
			condition(v1alpha1.ReservationConditionMatched, false, "NoNode", "not placed on a node yet"),
			condition(v1alpha1.ReservationConditionExpired, false, "NoNode", "the TTL starts when the reservation is placed"),
		}
	}
}

// podGroupConditions says why a group is or is not Scheduled, Running and TimedOut.
func podGroupConditions(st store.PodGroup, phase v1alpha1.PodGroupPhase, minMember int32) []metav1.Condition {
	c := st.Counts
	placed := fmt.Sprintf("%d of %d members placed", c.Placed(), minMember)
	running := fmt.Sprintf("%d of %d members running or succeeded", c.Running+c.Succeeded, minMember)
	scheduledReason, runningReason := "WaitingForMembers", "WaitingForMembers"
	if phase == v1alpha1.PodGroupFailed {
		scheduledReason, runningReason = "MembersFailed", "MembersFailed"
	}
	conds := []metav1.Condition{
		condition(v1alpha1.PodGroupConditionScheduled, c.Placed() >= minMember, scheduledReason, placed),
		condition(v1alpha1.PodGroupConditionRunning, c.Running+c.Succeeded >= minMember, runningReason, running),
		condition(v1alpha1.PodGroupConditionTimedOut, phase == v1alpha1.PodGroupTimeout, "WithinTimeout", "the schedule timeout has not passed unmet"),
	}
	if conds[0].Status == metav1.ConditionTrue {
		conds[0].Reason = "MinMemberPlaced"
	}
	if conds[1].Status == metav1.ConditionTrue {
		conds[1].Reason = "MinMemberRunning"
	}
	if phase == v1alpha1.PodGroupTimeout {
		conds[2].Reason, conds[2].Message = "ScheduleTimeout", "the schedule timeout passed with "+placed
	}
	return conds
}
