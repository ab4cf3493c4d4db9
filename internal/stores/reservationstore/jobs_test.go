package reservationstore_test

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// job is Job train (UID job-uid) with parallelism and completions (nil: unset).
func job(parallelism, completions *int32, edit ...func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "job-uid"},
		Spec:       batchv1.JobSpec{Parallelism: parallelism, Completions: completions},
	}
	for _, e := range edit {
		e(j)
	}
	return j
}

func succeeded(n int32) func(*batchv1.Job) { return func(j *batchv1.Job) { j.Status.Succeeded = n } }

func condition(typ batchv1.JobConditionType, status corev1.ConditionStatus) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: status})
	}
}

func suspended(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }

// TestJobWantsActive_TheJobControllersRule: the count of active pods the Job controller
// wants (its manageJob's wantActive), or nil where it is not the controller.
func TestJobWantsActive_TheJobControllersRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		want *int32
	}{
		{"nil parallelism and completions: one pod", job(nil, nil), ptr.To[int32](1)},
		{"nil parallelism, completions 5: one at a time", job(nil, ptr.To[int32](5)), ptr.To[int32](1)},
		{"parallelism 3, completions nil (work queue)", job(ptr.To[int32](3), nil), ptr.To[int32](3)},
		{"work queue once a pod succeeded: no new pod", job(ptr.To[int32](3), nil, succeeded(1)), ptr.To[int32](0)},
		{"parallelism 3, completions 10, 2 succeeded", job(ptr.To[int32](3), ptr.To[int32](10), succeeded(2)), ptr.To[int32](3)},
		{"remaining completions below parallelism", job(ptr.To[int32](3), ptr.To[int32](10), succeeded(8)), ptr.To[int32](2)},
		{"succeeded pods not counted yet count", job(ptr.To[int32](3), ptr.To[int32](10), succeeded(8), func(j *batchv1.Job) {
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"p1"}}
		}), ptr.To[int32](1)},
		{"at its completions", job(ptr.To[int32](3), ptr.To[int32](10), succeeded(10)), ptr.To[int32](0)},
		{"more succeeded than completions (completions lowered)", job(ptr.To[int32](3), ptr.To[int32](4), succeeded(6)), ptr.To[int32](0)},
		{"parallelism 0", job(ptr.To[int32](0), ptr.To[int32](10)), ptr.To[int32](0)},
		{"suspended", job(ptr.To[int32](3), ptr.To[int32](10), suspended), ptr.To[int32](0)},
		{"resumed (suspend false)", job(ptr.To[int32](3), ptr.To[int32](10), func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) }), ptr.To[int32](3)},
		{"Complete", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobComplete, corev1.ConditionTrue)), ptr.To[int32](0)},
		{"Failed", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobFailed, corev1.ConditionTrue)), ptr.To[int32](0)},
		{"SuccessCriteriaMet (finishing)", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)), ptr.To[int32](0)},
		{"FailureTarget (finishing)", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobFailureTarget, corev1.ConditionTrue)), ptr.To[int32](0)},
		{"a condition that is False does not finish it", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobFailed, corev1.ConditionFalse)), ptr.To[int32](3)},
		{"Suspended condition without spec.suspend (resumed)", job(ptr.To[int32](3), ptr.To[int32](10), condition(batchv1.JobSuspended, corev1.ConditionTrue)), ptr.To[int32](3)},
		{"managed by the built-in controller", job(ptr.To[int32](2), nil, func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To(batchv1.JobControllerName) }), ptr.To[int32](2)},
		{"managed by another controller: unknown", job(ptr.To[int32](2), nil, func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("kueue.x-k8s.io/multikueue") }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reservationstore.JobWantsActive(tc.job)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("wants %v active, want %v", ptr.Deref(got, -1), ptr.Deref(tc.want, -1))
			}
		})
	}
}

// feedJob feeds Job train, annotated reserve-on-delete, as the owner feed does.
func (c *cluster) feedJob(j *batchv1.Job) {
	c.t.Helper()
	o := ts.MakeOwner(v1alpha1.OwnerJob, j.Namespace, j.Name, "app", "train")
	o.UID, o.ReserveOnDelete, o.Replicas = j.UID, "true", reservationstore.JobWantsActive(j)
	if last, ok := lastSeenOwner(c.h, o.Key()); ok {
		o.ResourceVersion = last.ResourceVersion + "1"
		c.must(c.h.Update(last, o))
	} else {
		o.ResourceVersion = "1"
		c.must(c.h.Add(o))
	}
}

// expectCPU checks n1's requested and reserved CPU (millicores; a hold's placeholder
// counts as a pod, so the pod count is not checked) and every invariant.
func (c *cluster) expectCPU(what string, requested, reserved int64) {
	c.t.Helper()
	info, _ := c.h.NodeInfo("n1")
	if info.Requested.MilliCPU != requested || info.Reserved.MilliCPU != reserved {
		c.t.Errorf("%s: n1 requested %dm reserved %dm, want %dm and %dm", what, info.Requested.MilliCPU, info.Reserved.MilliCPU, requested, reserved)
	}
	for _, err := range c.h.CheckInvariants() {
		c.t.Errorf("%s: invariant: %v", what, err)
	}
}

// trainPod is a 2-CPU pod of Job train (UID uid) on n1, landed at at.
func trainPod(name, uid string, at time.Time, opts ...ts.PodOption) *corev1.Pod {
	return ts.MakePod("ns", name, append([]ts.PodOption{
		ts.OnNode("n1"), ts.Requests("2", "4Gi"), ts.WithLabels("app", "train", "batch.kubernetes.io/job-name", "train"),
		ts.OwnedBy("Job", "train", uid), ts.CreatedAt(at), ts.ScheduledAt(at),
	}, opts...)...)
}

// twoTrainPods feeds j and two of its pods on n1 (train-a, train-b); it returns train-a.
func twoTrainPods(t *testing.T, j *batchv1.Job) (*cluster, *corev1.Pod) {
	c := newCluster(t)
	c.feedJob(j)
	a, b := trainPod("train-a", "job-uid", t0), trainPod("train-b", "job-uid", t0)
	c.sync(store.PodKey(a), a)
	c.sync(store.PodKey(b), b)
	c.clk.Step(time.Minute)
	return c, a
}

// TestReserveOnDelete_JobRules: a Job's deleted pod keeps its place while the Job's
// landed pods are below the count of active pods its controller wants; not when the Job
// has what it wants (at its completions, finished, suspended, a work queue with a pod
// succeeded).
func TestReserveOnDelete_JobRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		job      *batchv1.Job
		wantHold bool
	}{
		{"below its parallelism", job(ptr.To[int32](2), ptr.To[int32](10)), true},
		{"nil parallelism and completions: wants one", job(nil, nil), false},
		{"work queue below its parallelism", job(ptr.To[int32](2), nil), true},
		{"work queue with a pod succeeded", job(ptr.To[int32](2), nil, succeeded(1)), false},
		{"one completion left", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(9)), false},
		{"at its completions", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(10)), false},
		{"completed", job(ptr.To[int32](2), ptr.To[int32](10), condition(batchv1.JobComplete, corev1.ConditionTrue)), false},
		{"suspended", job(ptr.To[int32](2), ptr.To[int32](10), suspended), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := twoTrainPods(t, tc.job)
			before := counter(t, "not_needed")
			c.sync(store.PodKey(a), nil)
			_, held := c.h.Reservation(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)})
			if held != tc.wantHold {
				t.Errorf("hold %v, want %v", held, tc.wantHold)
			}
			want, notNeeded := int64(4000), float64(0)
			if !tc.wantHold {
				want, notNeeded = 2000, 1
			}
			c.expectCPU("train-a deleted", want, want-2000)
			if got := counter(t, "not_needed") - before; got != notNeeded {
				t.Errorf("not_needed counted %v times, want %v", got, notNeeded)
			}
		})
	}
}

// TestReserveOnDelete_AJobChangeAfterTheHoldReleasesIt: a hold placed while the Job
// wanted two active pods is released when the Job no longer wants a replacement
// (parallelism lowered, completed, suspended, its last completion succeeded), counted
// released_scale_down; a hold the Job still wants stays across a status update.
func TestReserveOnDelete_AJobChangeAfterTheHoldReleasesIt(t *testing.T) {
	running := job(ptr.To[int32](2), ptr.To[int32](10), succeeded(3))
	for _, tc := range []struct {
		name     string
		next     *batchv1.Job
		released bool
	}{
		{"parallelism lowered to 1", job(ptr.To[int32](1), ptr.To[int32](10), succeeded(3)), true},
		{"completed", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(10), condition(batchv1.JobComplete, corev1.ConditionTrue)), true},
		{"suspended", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(3), suspended), true},
		{"one completion left", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(9)), true},
		{"more succeeded, still below", job(ptr.To[int32](2), ptr.To[int32](10), succeeded(5)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := twoTrainPods(t, running)
			c.sync(store.PodKey(a), nil)
			key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)}
			if v := c.view(key); !strings.Contains(v.Why, "Job train wants 2 active pods and 1 have landed") {
				t.Errorf("the hold says %q, want the Job's count", v.Why)
			}
			before := counter(t, "released_scale_down")
			c.feedJob(tc.next)
			_, held := c.h.Reservation(key)
			if held == tc.released {
				t.Errorf("hold kept %v, want %v", held, !tc.released)
			}
			want, released := int64(4000), float64(0)
			if tc.released {
				want, released = 2000, 1
			}
			c.expectCPU("after the Job changed", want, want-2000)
			if got := counter(t, "released_scale_down") - before; got != released {
				t.Errorf("released_scale_down counted %v times, want %v", got, released)
			}
		})
	}
	t.Run("Reservation first, then completed", func(t *testing.T) {
		c, a := twoTrainPods(t, running)
		c.sync(store.PodKey(a), nil)
		key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)}
		c.must(c.h.Add(created(c.view(key), c.clk.Now())))
		c.feedJob(job(ptr.To[int32](2), ptr.To[int32](10), succeeded(10), condition(batchv1.JobComplete, corev1.ConditionTrue)))
		c.expectCPU("completed after the Reservation took the hold over", 2000, 0)
		if v := c.view(key); v.Phase != v1alpha1.ReservationExpired || !strings.Contains(v.Why, "released") {
			t.Errorf("the Reservation is %s (%q), want Expired saying why", v.Phase, v.Why)
		}
	})
}

// TestReserveOnDelete_AJobPodReplacedKeepsOnePlace: the Job's replacement lands on n1 and
// consumes the hold: n1 is charged once.
func TestReserveOnDelete_AJobPodReplacedKeepsOnePlace(t *testing.T) {
	c, a := twoTrainPods(t, job(ptr.To[int32](2), nil))
	c.sync(store.PodKey(a), nil)
	c.expectCPU("train-a deleted", 4000, 2000)
	c.clk.Step(time.Second)
	r := trainPod("train-c", "job-uid", c.clk.Now())
	c.sync(store.PodKey(r), r)
	v := c.view(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)})
	if v.Phase != v1alpha1.ReservationMatched || v.Owner == nil || v.Owner.Name != "train-c" {
		t.Errorf("hold %s by %v, want Matched by train-c", v.Phase, v.Owner)
	}
	c.expectCPU("train-c replaced train-a", 4000, 0)
}

// TestReserveOnDelete_AJobPodOfAJobNotReadKeepsTheUnownedBehaviour: a pod whose Job the
// cache has not seen (not yet, or no longer: the Job deleted), of another Job than the one seen under that name
// (UID), or of a Job another controller manages: the place is kept until the TTL, as for a
// pod without an owner multicache reads, and the hold says so.
func TestReserveOnDelete_AJobPodOfAJobNotReadKeepsTheUnownedBehaviour(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *batchv1.Job // fed; nil: none
		uid  string       // of the pod's owner reference
		gone bool         // the Job deleted after it was fed
	}{
		{"no Job seen", nil, "job-uid", false},
		{"the Job gone", job(ptr.To[int32](1), ptr.To[int32](1), succeeded(1)), "job-uid", true},
		{"another Job of that name", job(ptr.To[int32](1), ptr.To[int32](1), succeeded(1)), "old-job-uid", false},
		{"managed by another controller", job(ptr.To[int32](1), nil, succeeded(1), func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/queue") }), "job-uid", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			if tc.job != nil {
				c.feedJob(tc.job)
			}
			if tc.gone {
				last, _ := lastSeenOwner(c.h, store.OwnerKey{Type: v1alpha1.OwnerJob, Namespace: "ns", Name: "train"})
				c.must(c.h.Delete(last))
			}
			a := trainPod("train-a", tc.uid, t0, kept())
			c.sync(store.PodKey(a), a)
			c.clk.Step(time.Minute)
			c.sync(store.PodKey(a), nil)
			key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)}
			if v := c.view(key); !strings.Contains(v.Why, "not one multicache reads") {
				t.Errorf("the hold says %q, want that its owner is not read", v.Why)
			}
			c.expectCPU("train-a deleted", 2000, 2000)
			c.clk.Step(holdTTL)
			c.h.DropDueHolds()
			if info, _ := c.h.NodeInfo("n1"); info.Requested.MilliCPU != 0 {
				t.Errorf("at the TTL: n1 requested %dm, want 0", info.Requested.MilliCPU)
			}
		})
	}
}

// TestReserveOnDelete_ADeletedPodMarkedFailedByTheKubeletKeepsItsPlace: a Job's pod is
// deleted gracefully, the kubelet marks it Failed before it is removed (every deleted pod
// gets a terminal phase), and the Job controller removes its tracking finalizer: the place
// is kept from the terminal update on (when the node stops charging the pod), with no gap,
// decided once; the pod's removal after changes nothing. A pod that finished before it was
// deleted keeps nothing (its place was free already).
func TestReserveOnDelete_ADeletedPodMarkedFailedByTheKubeletKeepsItsPlace(t *testing.T) {
	t.Run("deleted, then Failed, then gone", func(t *testing.T) {
		c, a := twoTrainPods(t, job(ptr.To[int32](2), nil))
		before := counter(t, "held")
		deleting := a.DeepCopy()
		deleting.ResourceVersion = "2"
		deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(c.clk.Now().Add(30*time.Second))), ptr.To[int64](30)
		c.sync(store.PodKey(a), deleting)
		c.expectCPU("train-a being deleted", 4000, 0)
		c.clk.Step(5 * time.Second)
		failed := deleting.DeepCopy()
		failed.ResourceVersion, failed.Status.Phase = "3", corev1.PodFailed
		c.sync(store.PodKey(a), failed)
		key := types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)}
		if v := c.view(key); v.Phase != v1alpha1.ReservationReserved || !v.ReservedAt.Equal(c.clk.Now().Add(-5*time.Second).Truncate(time.Second)) {
			t.Errorf("hold %s from %v, want Reserved from the deletion", v.Phase, v.ReservedAt)
		}
		c.expectCPU("train-a Failed by the kubelet", 4000, 2000)
		c.sync(store.PodKey(a), nil)
		c.expectCPU("train-a gone", 4000, 2000)
		if got := counter(t, "held") - before; got != 1 {
			t.Errorf("held counted %v times, want once", got)
		}
	})
	t.Run("deleted and Failed in one update", func(t *testing.T) {
		c, a := twoTrainPods(t, job(ptr.To[int32](2), nil))
		failed := a.DeepCopy()
		failed.ResourceVersion, failed.Status.Phase = "2", corev1.PodFailed
		failed.DeletionTimestamp, failed.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(c.clk.Now().Add(30*time.Second))), ptr.To[int64](30)
		c.sync(store.PodKey(a), failed)
		c.expectCPU("train-a deleted and Failed", 4000, 2000)
	})
	t.Run("finished, then deleted", func(t *testing.T) {
		c, a := twoTrainPods(t, job(ptr.To[int32](2), nil))
		done := a.DeepCopy()
		done.ResourceVersion, done.Status.Phase = "2", corev1.PodSucceeded
		c.sync(store.PodKey(a), done)
		deleting := done.DeepCopy()
		deleting.ResourceVersion = "3"
		deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(c.clk.Now())), ptr.To[int64](0)
		c.sync(store.PodKey(a), deleting)
		c.sync(store.PodKey(a), nil)
		if _, ok := c.h.Reservation(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(a)}); ok {
			t.Error("a place was kept for a pod that had finished before it was deleted")
		}
		c.expectCPU("train-a finished, then deleted", 2000, 0)
	})
}
