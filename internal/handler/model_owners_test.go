package handler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ownersWorld is what the owner fuzz keeps of the API: two annotated ReplicaSets with
// their desired counts, an annotated Job (j) with what its wanted count depends on, and
// their pods.
type ownersWorld struct {
	replicas map[string]int32
	job      *batchv1.Job // nil until it appears
	owners   map[string]*store.Owner
	pods     map[string]*corev1.Pod
	rv       int
}

// jobWants is the model's count of active pods the Job controller wants (its manageJob):
// none when the Job is suspended or finished; else min(parallelism, completions -
// succeeded), or parallelism until a pod succeeded when completions is not set.
func jobWants(j *batchv1.Job) int32 {
	if ptr.Deref(j.Spec.Suspend, false) || len(j.Status.Conditions) > 0 {
		return 0
	}
	p := ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions == nil {
		if j.Status.Succeeded > 0 {
			return 0
		}
		return p
	}
	return max(0, min(p, *j.Spec.Completions-j.Status.Succeeded))
}

// randomJob is Job j in a random state: parallelism and completions nil or small, some
// succeeded, sometimes suspended or complete.
func randomJob(r *rand.Rand) *batchv1.Job {
	small := func() *int32 {
		if r.IntN(4) == 0 {
			return nil
		}
		return ptr.To(int32(r.IntN(4)))
	}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "uid-j"},
		Spec:       batchv1.JobSpec{Parallelism: small(), Completions: small(), Suspend: ptr.To(r.IntN(6) == 0)},
		Status:     batchv1.JobStatus{Succeeded: int32(r.IntN(3))},
	}
	if r.IntN(6) == 0 {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

// TestModel_OwnersAndScaleChangesKeepNoHoldTheOwnerDoesNotWant runs seeded random
// sequences of ReplicaSet scale changes, Job changes (parallelism, completions, succeeded,
// suspended, complete), pods created, bound, finished (a Job's completion counted by its
// controller) and deleted (force or graceful, a deleting pod ended Failed by the kubelet),
// the leader's Reservations taking holds over, and time passing (holds dropped, reservations
// reaped). After every step: every invariant holds, and no Reserved hold or replacement
// Reservation keeps a place for a ReplicaSet or Job whose landed pods, counted here from
// the pods the API holds, already meet its replicas (for the Job, the count of active pods
// the model's Job controller wants).
func TestModel_OwnersAndScaleChangesKeepNoHoldTheOwnerDoesNotWant(t *testing.T) {
	sequences, length := 60, 200
	if testing.Short() {
		sequences = 10
	}
	results := []string{"held", "not_needed", "released_scale_down", "consumed", "expired"}
	before := map[string]float64{}
	for _, res := range results {
		before[res] = reserveOnDeleteCount(t, res)
	}
	var jobs jobStats
	for seed := range sequences {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			s := runOwners(t, rand.New(rand.NewPCG(uint64(seed), 0x6f77)), length)
			jobs.held += s.held
			jobs.released += s.released
		})
	}
	t.Logf("Job holds: %d placed, %d released by a Job change", jobs.held, jobs.released)
	if jobs.held == 0 || jobs.released == 0 {
		t.Error("no sequence placed a Job's hold and released it by a Job change: the generator misses a case")
	}
	// What the sequences exercised: each result must have happened.
	for _, res := range results {
		n := reserveOnDeleteCount(t, res) - before[res]
		t.Logf("%s: %v", res, n)
		if n == 0 {
			t.Errorf("no sequence ended a hold %s: the generator misses a case", res)
		}
	}
}

func reserveOnDeleteCount(t *testing.T, result string) float64 {
	t.Helper()
	return counterValue(t, metrics.ReserveOnDeleteTotal.WithLabelValues(result))
}

// jobStats counts what a sequence did with the Job's holds: placed, and released by a
// change of the Job.
type jobStats struct{ held, released int }

// jobHolds returns the keys of the Reserved holds and Reservations kept for Job j's pods.
func jobHolds(h *Handler) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, n := range []string{"n0", "n1"} {
		for _, v := range h.ReservationsOnNode(n) {
			if refs := v.Reservation.OwnerReferences; v.Phase == v1alpha1.ReservationReserved && len(refs) == 1 && refs[0].Kind == "Job" {
				out[v.Key] = true
			}
		}
	}
	return out
}

func runOwners(t *testing.T, r *rand.Rand, length int) jobStats {
	var stats jobStats
	h, clk := newQuietHandler(t)
	for _, n := range []string{"n0", "n1"} {
		must(t, h.Add(ts.MakeNode(n, "64", "256Gi")))
	}
	w := &ownersWorld{replicas: map[string]int32{}, owners: map[string]*store.Owner{}, pods: map[string]*corev1.Pod{}}
	var history []string
	next := 0
	for step := range length {
		var did string
		heldBefore := jobHolds(h)
		jobChanged := false
		switch k := r.IntN(10); {
		case k == 0 && r.IntN(2) == 0: // the Job changes (its first appearance included)
			j := randomJob(r)
			o := ts.MakeOwner(v1alpha1.OwnerJob, "ns", "j", "app", "j")
			o.UID, o.ReserveOnDelete, o.Replicas = j.UID, "true", reservationstore.JobWantsActive(j)
			w.rv++
			o.ResourceVersion = fmt.Sprint(w.rv)
			if old, ok := w.owners["j"]; ok {
				must(t, h.Update(old, o))
			} else {
				must(t, h.Add(o))
			}
			w.owners["j"], w.job, jobChanged = o, j, true
			did = fmt.Sprintf("Job j: parallelism %d completions %d succeeded %d suspended %v conditions %d (wants %d)",
				ptr.Deref(j.Spec.Parallelism, -1), ptr.Deref(j.Spec.Completions, -1), j.Status.Succeeded, *j.Spec.Suspend,
				len(j.Status.Conditions), jobWants(j))
		case k == 0: // scale a ReplicaSet (its first appearance included)
			rs := pickOf(r, "a", "b")
			w.replicas[rs] = int32(r.IntN(4))
			o := ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", rs, "app", rs)
			o.UID, o.ReserveOnDelete, o.Replicas = types.UID("uid-"+rs), "true", ptr.To(w.replicas[rs])
			w.rv++
			o.ResourceVersion = fmt.Sprint(w.rv)
			if old, ok := w.owners[rs]; ok {
				must(t, h.Update(old, o))
			} else {
				must(t, h.Add(o))
			}
			w.owners[rs] = o
			did = fmt.Sprintf("ReplicaSet %s wants %d", rs, w.replicas[rs])
		case k <= 3: // a pod created, unbound or bound
			rs, kind := pickOf(r, "a", "b", "j"), "ReplicaSet"
			if rs == "j" {
				kind = "Job"
			}
			name := fmt.Sprintf("%s-%d", rs, next)
			next++
			opts := []ts.PodOption{ts.Requests("1", "1Gi"), ts.WithLabels("app", rs), ts.OwnedBy(kind, rs, "uid-"+rs),
				ts.CreatedAt(clk.Now())}
			if r.IntN(2) == 0 {
				opts = append(opts, ts.OnNode(pickOf(r, "n0", "n1")), ts.ScheduledAt(clk.Now()))
			}
			pod := ts.MakePod("ns", name, opts...)
			w.pods[name] = pod
			must(t, h.Sync(store.PodKey(pod), pod, true, Current))
			did = fmt.Sprintf("pod %s created on %q", name, pod.Spec.NodeName)
		case k <= 5: // a pod bound, or finished
			pod := pickPod(r, w)
			if pod == nil {
				continue
			}
			upd := pod.DeepCopy()
			if upd.Spec.NodeName == "" {
				ts.OnNode(pickOf(r, "n0", "n1"))(upd)
				ts.ScheduledAt(clk.Now())(upd)
				did = "bound " + upd.Name + " to " + upd.Spec.NodeName
			} else if upd.DeletionTimestamp != nil {
				upd.Status.Phase = corev1.PodFailed // the kubelet ends a deleted pod
				did = "the kubelet ended " + upd.Name
			} else {
				upd.Status.Phase = corev1.PodSucceeded
				did = "finished " + upd.Name
			}
			w.pods[upd.Name] = upd
			must(t, h.Sync(store.PodKey(upd), upd, true, Current))
			if upd.Status.Phase == corev1.PodSucceeded && upd.OwnerReferences[0].Kind == "Job" && w.job != nil && !store.IsTerminal(pod) {
				// The Job controller counts the completion.
				j := w.job.DeepCopy()
				j.Status.Succeeded++
				o := *w.owners["j"]
				o.Replicas = reservationstore.JobWantsActive(j)
				w.rv++
				o.ResourceVersion = fmt.Sprint(w.rv)
				must(t, h.Update(w.owners["j"], &o))
				w.owners["j"], w.job, jobChanged = &o, j, true
				did += fmt.Sprintf(", Job j succeeded %d (wants %d)", j.Status.Succeeded, jobWants(j))
			}
		case k <= 7: // a pod deleted, gracefully or by force
			pod := pickPod(r, w)
			if pod == nil {
				continue
			}
			if r.IntN(2) == 0 && pod.DeletionTimestamp == nil {
				upd := pod.DeepCopy()
				upd.DeletionTimestamp, upd.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(clk.Now().Add(30*time.Second))), ptr.To[int64](30)
				w.pods[upd.Name] = upd
				must(t, h.Sync(store.PodKey(upd), upd, true, Current))
				did = "deleting " + upd.Name
			} else {
				delete(w.pods, pod.Name)
				must(t, h.Sync(store.PodKey(pod), (*corev1.Pod)(nil), true, Current))
				did = "deleted " + pod.Name
			}
		case k == 8: // the leader's Reservations take the holds over
			for _, key := range h.ReservationHolds() {
				v, _ := h.Reservation(key)
				rsv := v.Reservation.DeepCopy()
				rsv.UID, rsv.CreationTimestamp = types.UID("rsv-"+key.Name), metav1.NewTime(clk.Now().Truncate(time.Second))
				must(t, h.Add(rsv))
			}
			did = "Reservations created"
		default: // time passes
			clk.Step(time.Duration(r.IntN(90)) * time.Second)
			h.DropDueHolds()
			h.ReapReservations()
			did = "time passes"
		}
		history = append(history, did)
		if errs := h.CheckInvariants(); len(errs) > 0 {
			t.Fatalf("step %d (%s): %v\nhistory: %v", step, did, errs, history)
		}
		if bad := unwantedHolds(h, w); len(bad) > 0 {
			t.Fatalf("step %d (%s): %v\nhistory: %v", step, did, bad, history)
		}
		after := jobHolds(h)
		for key := range after {
			if !heldBefore[key] {
				stats.held++
			}
		}
		for key := range heldBefore {
			if !after[key] && jobChanged {
				stats.released++
			}
		}
	}
	return stats
}

// unwantedHolds lists the Reserved holds and replacement Reservations whose ReplicaSet or
// Job, counted from the world's pods, already has its landed pods.
func unwantedHolds(h *Handler, w *ownersWorld) []string {
	landed := map[string]int32{}
	for _, p := range w.pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !store.IsTerminal(p) {
			landed[p.OwnerReferences[0].Name]++
		}
	}
	var bad []string
	for _, n := range []string{"n0", "n1"} {
		for _, v := range h.ReservationsOnNode(n) {
			refs := v.Reservation.OwnerReferences
			if v.Phase != v1alpha1.ReservationReserved || len(refs) != 1 {
				continue
			}
			rs := refs[0].Name
			want, known := w.replicas[rs]
			if rs == "j" && w.job != nil {
				want, known = jobWants(w.job), true
			}
			if known && landed[rs] >= want {
				bad = append(bad, fmt.Sprintf("%s keeps a place on %s for %s %s, which has %d of %d landed", v.Key, n, refs[0].Kind, rs, landed[rs], want))
			}
		}
	}
	return bad
}

func pickOf(r *rand.Rand, options ...string) string { return options[r.IntN(len(options))] }

// pickPod picks one of the world's pods (in name order, for a reproducible run).
func pickPod(r *rand.Rand, w *ownersWorld) *corev1.Pod {
	if len(w.pods) == 0 {
		return nil
	}
	names := make([]string, 0, len(w.pods))
	for n := range w.pods {
		names = append(names, n)
	}
	slices.Sort(names)
	return w.pods[names[r.IntN(len(names))]]
}
