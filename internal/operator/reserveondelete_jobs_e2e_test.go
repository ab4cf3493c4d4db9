package operator

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// Reserve-on-delete for the pods of Jobs, through the real API server. No Job controller
// runs: the tests play it, creating the pods with the Job's controller reference and the
// labels the API server gave its template, and writing its status through the status
// subresource.

// annotatedJob creates Job name annotated reserve-on-delete with parallelism and
// completions (nil: unset) and waits until op's cache holds it wanting want active pods.
func annotatedJob(t *testing.T, op *running, ns, name string, parallelism, completions *int32, want int32) *batchv1.Job {
	t.Helper()
	tmpl := podTemplate(name)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec:       batchv1.JobSpec{Parallelism: parallelism, Completions: completions, Template: tmpl},
	}
	create(t, j)
	ownerSeen(t, op, v1alpha1.OwnerJob, ns, name, want)
	return j
}

// jobPod creates a 2-CPU pod of Job j, as its controller does (the template's labels, which
// the API server completed with the Job's selector, its finalizers, and a controller
// reference to the Job), and binds it to node.
func jobPod(t *testing.T, j *batchv1.Job, name, node string) *corev1.Pod {
	t.Helper()
	var labels []string
	for k, v := range j.Spec.Template.Labels {
		labels = append(labels, k, v)
	}
	pod := ts.MakePod(j.Namespace, name, ts.Requests("2", "4Gi"), ts.WithLabels(labels...))
	pod.Finalizers = j.Spec.Template.Finalizers
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
	create(t, pod)
	bind(t, pod, node)
	return pod
}

// jobStatus writes Job j's status as its controller would, through the status subresource.
func jobStatus(t *testing.T, j *batchv1.Job, edit func(*batchv1.JobStatus)) {
	t.Helper()
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(j), j); err != nil {
		t.Fatal(err)
	}
	edit(&j.Status)
	if err := env.Client.Status().Update(ctx(), j); err != nil {
		t.Fatal(err)
	}
}

// jobWithTwoPods starts an operator (reservation TTL ttl), a node of 8 CPU and Job train
// (parallelism 2, completions given) with train-a and train-b charged on the node, and
// waits for the next second (times are whole seconds: train-b landed in an earlier second
// than a deletion after, or it would count as its replacement). It returns train-a.
func jobWithTwoPods(t *testing.T, ttl time.Duration, completions *int32) (op *running, ns, node string, j *batchv1.Job, a *corev1.Pod) {
	t.Helper()
	op = startOperator(t, func(o *Options) { o.ReservationTTL = ttl })
	ns = newNamespace(t)
	node = "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	j = annotatedJob(t, op, ns, "train", ptr.To[int32](2), completions, 2)
	a = jobPod(t, j, "train-a", node)
	jobPod(t, j, "train-b", node)
	jobStatus(t, j, func(s *batchv1.JobStatus) { s.StartTime, s.Active = ptr.To(metav1.Now()), 2 })
	eventually(t, "both pods are charged", charged(op, node, 4000, 0))
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	return op, ns, node, j, a
}

// TestReserveOnDelete_JobPodReplacedBelowItsParallelism: a pod of a Job running below its
// parallelism (2 wanted, 1 left) is deleted and replaced by the Job's next pod on the node:
// exactly one place is kept, with no gap and no double charge.
func TestReserveOnDelete_JobPodReplacedBelowItsParallelism(t *testing.T) {
	op, ns, node, j, a := jobWithTwoPods(t, time.Minute, ptr.To[int32](4))
	watch := watchCharge(op, node, 4000, 2)

	deleteNow(t, a)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(a)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	eventually(t, "an Event says the Job wants the replacement", eventSaying(ns, key.Name, "Job train wants 2 active pods"))
	jobPod(t, j, "train-c", node)
	eventually(t, "train-c consumed the place", reservationPhase(key, v1alpha1.ReservationMatched, "train-c"))
	eventually(t, "nothing counted twice", charged(op, node, 4000, 0))
	watch.check(t, "Job pod replaced")
}

// TestReserveOnDelete_AJobAtItsCompletionsGetsNoHold: a Job with one completion left
// wants one active pod and has two: a deleted pod keeps no place; the node ends at the
// charge of the pod left and stays there (not_needed).
func TestReserveOnDelete_AJobAtItsCompletionsGetsNoHold(t *testing.T) {
	op, ns, node, j, a := jobWithTwoPods(t, time.Minute, ptr.To[int32](3))
	jobStatus(t, j, func(s *batchv1.JobStatus) { s.Succeeded = 2 })
	ownerSeen(t, op, v1alpha1.OwnerJob, ns, "train", 1)
	before := reserveOnDeleteCount(t, "not_needed")

	deleteNow(t, a)
	eventually(t, "the node is at 2 CPU", charged(op, node, 2000, 0))
	watch := watchCharge(op, node, 2000, 1)
	time.Sleep(time.Second) // samples that it stays there
	watch.check(t, "after the delete")
	noReservations(t, op, ns)
	if got := reserveOnDeleteCount(t, "not_needed"); got != before+1 {
		t.Errorf("not_needed counted %v times, want once", got-before)
	}
}

// TestReserveOnDelete_ACompletedJobGetsNoHold: a Job its controller marked Complete wants
// no pod: a deleted pod of it keeps no place.
func TestReserveOnDelete_ACompletedJobGetsNoHold(t *testing.T) {
	op, ns, node, j, a := jobWithTwoPods(t, time.Minute, ptr.To[int32](2))
	jobStatus(t, j, func(s *batchv1.JobStatus) {
		now := metav1.Now()
		s.Succeeded, s.Active, s.CompletionTime = 2, 0, &now
		s.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: batchv1.JobReasonCompletionsReached},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: batchv1.JobReasonCompletionsReached},
		}
	})
	ownerSeen(t, op, v1alpha1.OwnerJob, ns, "train", 0)

	deleteNow(t, a)
	eventually(t, "the node is at 2 CPU", charged(op, node, 2000, 0))
	watch := watchCharge(op, node, 2000, 1)
	time.Sleep(time.Second)
	watch.check(t, "after the delete")
	noReservations(t, op, ns)
}

// TestReserveOnDelete_AJobsParallelismLoweredAfterTheHoldReleasesIt: a Job of parallelism
// 2 loses a pod (a place is kept), then its parallelism is lowered to 1: the place is
// released, the Reservation ends Expired with an Event saying why (released_scale_down).
func TestReserveOnDelete_AJobsParallelismLoweredAfterTheHoldReleasesIt(t *testing.T) {
	op, ns, node, j, a := jobWithTwoPods(t, 10*time.Minute, nil)
	before := reserveOnDeleteCount(t, "released_scale_down")

	deleteNow(t, a)
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(a)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	eventually(t, "train-b and the place are charged", charged(op, node, 4000, 2000))

	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(j), j); err != nil {
		t.Fatal(err)
	}
	j.Spec.Parallelism = ptr.To[int32](1)
	if err := env.Client.Update(ctx(), j); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the place is released", charged(op, node, 2000, 0))
	expectReleasedScaleDown(t, ns, key, before)
}

// TestReserveOnDelete_AJobPodEndedByTheKubeletKeepsOnePlace: the whole life of a deleted
// Job pod in a cluster, the test playing the kubelet and the Job controller: the pod
// carries the Job's tracking finalizer, is deleted gracefully, the kubelet marks it Failed
// and deletes it for good, the Job controller drops the finalizer, and the Job's next pod
// lands. The node's charge never moves: the place is kept from the moment the pod turned
// terminal, and the replacement takes it.
func TestReserveOnDelete_AJobPodEndedByTheKubeletKeepsOnePlace(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationTTL = time.Minute })
	ns := newNamespace(t)
	node := "rod-" + ns
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	j := annotatedJob(t, op, ns, "train", ptr.To[int32](2), nil, 2)
	j.Spec.Template.Finalizers = []string{batchv1.JobTrackingFinalizer} // as the controller adds it to its pods
	a := jobPod(t, j, "train-a", node)
	jobPod(t, j, "train-b", node)
	eventually(t, "both pods are charged", charged(op, node, 4000, 0))
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	watch := watchCharge(op, node, 4000, 2)

	if err := env.Client.Delete(ctx(), a, client.GracePeriodSeconds(30)); err != nil {
		t.Fatal(err)
	}
	// The kubelet: the containers stopped, the pod Failed, then deleted for good.
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	a.Status.Phase = corev1.PodFailed
	if err := env.Client.Status().Update(ctx(), a); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: reservationstore.ReplacementName(a)}
	eventually(t, "the Reservation is Reserved", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	if err := env.Client.Delete(ctx(), a, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	// The Job controller: the failure counted, the finalizer dropped; the pod is gone.
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	a.Finalizers = nil
	if err := env.Client.Update(ctx(), a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "train-a is gone", func() (bool, string) {
		err := env.Client.Get(ctx(), client.ObjectKeyFromObject(a), &corev1.Pod{})
		return client.IgnoreNotFound(err) == nil && err != nil, "still there"
	})
	jobPod(t, j, "train-c", node)
	eventually(t, "train-c consumed the place", reservationPhase(key, v1alpha1.ReservationMatched, "train-c"))
	eventually(t, "nothing counted twice", charged(op, node, 4000, 0))
	watch.check(t, "Job pod ended by the kubelet and replaced")
}
