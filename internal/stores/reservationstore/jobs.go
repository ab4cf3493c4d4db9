package reservationstore

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// JobWantsActive is how many active pods the Job controller wants a Job to have, the
// count the owner feed gives the store as the Job's desired count (stores.Owner.Replicas):
// a deleted pod of the Job gets a hold while fewer of its pods have landed (bound, not
// terminal, not being deleted) than that.
//
// It follows kube-controller-manager's Job controller (pkg/controller/job, manageJob):
//
//   - a finished or finishing Job (a Complete, Failed, SuccessCriteriaMet or FailureTarget
//     condition that is True) and a suspended one (spec.suspend) create no pod: 0;
//   - spec.completions set: min(parallelism, completions - succeeded), at least 0;
//   - spec.completions nil (a work queue): parallelism until any pod succeeded, then no new
//     pod (the controller leaves the running ones running): 0.
//
// parallelism is spec.parallelism, 1 when nil (the API server's default); succeeded counts
// status.succeeded and the succeeded pods the controller has not counted yet
// (status.uncountedTerminatedPods). It returns nil, "unknown", for a Job another
// controller manages (spec.managedBy other than the built-in one): its pods keep their
// place as pods without an owner multicache reads do.
//
// A Job that replaces only failed pods (podReplacementPolicy: Failed, or a
// podFailurePolicy) creates the replacement of a deleted pod once that pod is terminal,
// not while it terminates. The store places the hold when the API reports the pod gone,
// which is after that point, so the hold is right there too: the replacement is coming,
// and takes the place.
func JobWantsActive(job *batchv1.Job) *int32 {
	if m := job.Spec.ManagedBy; m != nil && *m != batchv1.JobControllerName {
		return nil
	}
	want := int32(0)
	if jobCreatesPods(job) {
		parallelism := int32(1)
		if p := job.Spec.Parallelism; p != nil {
			parallelism = max(*p, 0)
		}
		succeeded := job.Status.Succeeded
		if u := job.Status.UncountedTerminatedPods; u != nil {
			succeeded += int32(len(u.Succeeded))
		}
		switch c := job.Spec.Completions; {
		case c != nil:
			want = max(min(parallelism, *c-succeeded), 0)
		case succeeded == 0:
			want = parallelism
		}
	}
	return &want
}

// jobCreatesPods reports whether the Job controller still creates pods for job: it is not
// suspended, not finished and not finishing.
func jobCreatesPods(job *batchv1.Job) bool {
	if job.Spec.Suspend != nil && *job.Spec.Suspend {
		return false
	}
	for _, c := range job.Status.Conditions {
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet, batchv1.JobFailureTarget:
			if c.Status == corev1.ConditionTrue {
				return false
			}
		}
	}
	return true
}
