package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodGroupStatusReconciler writes PodGroup status from the cache (leader only): the phase
// and the member counters. A group waiting for members is reconciled again when its
// schedule timeout is due.
type PodGroupStatusReconciler struct {
	Client   client.Client
	Reader   podGroupReader
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
}

// Reconcile implements reconcile.Reconciler.
func (r *PodGroupStatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pg := &v1alpha1.PodGroup{}
	st, ok, err := readForStatus(ctx, r.Client, req.NamespacedName, pg, func() (store.PodGroup, client.Object, bool) {
		v, found := r.Reader.PodGroup(req.NamespacedName)
		return v, v.PodGroup, found
	})
	if !ok {
		return ctrl.Result{}, err
	}
	st = confirmed(st, r.Reader)
	now := r.Clock.Now()
	phase := st.Phase(now)
	wrote, err := writeStatus(ctx, r.Client, pg,
		func(cur *v1alpha1.PodGroup) (*v1alpha1.PodGroup, error) {
			next := cur.DeepCopy()
			next.Status = podGroupStatus(cur.Status, st, phase)
			next.Status.Conditions = setConditions(cur.Status.Conditions, cur.Generation, now,
				podGroupConditions(st, phase, cur.Spec.MinMember)...)
			return next, nil
		})
	if err != nil {
		return ctrl.Result{}, err
	}
	if wrote && pg.Status.Phase != phase && r.Recorder != nil {
		if phase == v1alpha1.PodGroupTimeout {
			r.Recorder.Eventf(pg, nil, "Warning", "Timeout", "Schedule",
				"%d of %d members placed when the schedule timeout passed", st.Counts.Placed(), pg.Spec.MinMember)
		} else {
			r.Recorder.Eventf(pg, nil, "Normal", string(phase), "PhaseChange",
				"%d pending, %d scheduled, %d running, %d succeeded, %d failed of minMember %d",
				st.Counts.Pending, st.Counts.Scheduled, st.Counts.Running, st.Counts.Succeeded, st.Counts.Failed, pg.Spec.MinMember)
		}
	}
	waiting := phase == v1alpha1.PodGroupPending || phase == v1alpha1.PodGroupPreScheduling
	if waiting && !st.TimeoutAt.IsZero() && st.TimeoutAt.After(now) {
		return ctrl.Result{RequeueAfter: st.TimeoutAt.Sub(now)}, nil
	}
	return ctrl.Result{}, nil
}

// podGroupStatus derives a group's status, keeping its conditions (the writer sets its own
// on top) and its schedule start.
func podGroupStatus(cur v1alpha1.PodGroupStatus, st store.PodGroup, phase v1alpha1.PodGroupPhase) v1alpha1.PodGroupStatus {
	next := v1alpha1.PodGroupStatus{
		Phase:             phase,
		Pending:           st.Counts.Pending,
		Scheduled:         st.Counts.Scheduled,
		Running:           st.Counts.Running,
		Succeeded:         st.Counts.Succeeded,
		Failed:            st.Counts.Failed,
		ScheduleStartTime: cur.ScheduleStartTime,
		Conditions:        cur.Conditions,
	}
	if next.ScheduleStartTime == nil {
		next.ScheduleStartTime = apiTime(st.ScheduleStartTime)
	}
	return next
}

// confirmed is st as the API confirms it: a member the cache only assumed (a scheduler's
// placement in flight, or a sibling's trial) counts as pending. The phase, counts and
// conditions written to the API move on bound members only, so an assumption forgotten
// again never flips a group's status (and its Events) back and forth; the cache's own
// answers (Reader.PodGroup, what a scheduler's Permit waits on) count assumed members.
func confirmed(st store.PodGroup, r podGroupReader) store.PodGroup {
	for _, key := range st.Members {
		if ps, ok := r.PodState(key); ok && ps.State == store.PodAssumed && !terminalOrRunning(ps.Pod.Status.Phase) {
			st.Counts.Scheduled--
			st.Counts.Pending++
		}
	}
	if st.PodGroup != nil {
		st.MinMemberReached = st.Counts.Placed() >= st.PodGroup.Spec.MinMember
	}
	return st
}

// terminalOrRunning: a member in one of these phases is counted by its phase, not by its
// node (store.PodGroupCounts).
func terminalOrRunning(phase corev1.PodPhase) bool {
	return phase == corev1.PodRunning || phase == corev1.PodSucceeded || phase == corev1.PodFailed
}
