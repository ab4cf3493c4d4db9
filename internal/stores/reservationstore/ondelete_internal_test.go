package reservationstore

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
)

func TestParseReserveOnDelete_BadValuesSayWhatToSet(t *testing.T) {
	for _, v := range []string{"yes", "", "on", "2", "true!"} {
		_, err := parseReserveOnDelete(v, "pod ns/p")
		if !errors.Is(err, ErrInvalidReserveOnDelete) {
			t.Errorf("%q: error %v, want ErrInvalidReserveOnDelete", v, err)
			continue
		}
		for _, want := range []string{"pod ns/p", v1alpha1.ReserveOnDeleteAnnotation, `"true"`, `"false"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %q does not say %s", v, err, want)
			}
		}
	}
	for v, want := range map[string]bool{"true": true, "True": true, " 1 ": true, "false": false, "0": false} {
		if got, err := parseReserveOnDelete(v, "pod ns/p"); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
}

func TestReplacementName_ValidAndDistinctPerUID(t *testing.T) {
	long := strings.Repeat("a", 240) + "." + strings.Repeat("b", 12)
	for _, name := range []string{"web-0", long, strings.Repeat("x", 244) + "-.yy"} {
		a := ReplacementName(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "u1"}})
		b := ReplacementName(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "u2"}})
		if msgs := validation.IsDNS1123Subdomain(a); len(msgs) > 0 {
			t.Errorf("%q: %v", a, msgs)
		}
		if a == b {
			t.Errorf("two UIDs of %s share the name %s", name, a)
		}
	}
}

func TestDeletedAt_IsWhenTheDeletionWasAskedFor(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 500, time.UTC)
	pod := &corev1.Pod{}
	if got := deletedAt(pod, now); !got.Equal(now.Truncate(time.Second)) {
		t.Errorf("no deletionTimestamp: %v, want now", got)
	}
	pod.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(20 * time.Second)))
	pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
	if got, want := deletedAt(pod, now), now.Add(-10*time.Second).Truncate(time.Second); !got.Equal(want) {
		t.Errorf("graceful: %v, want %v", got, want)
	}
	pod.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(time.Hour)))
	pod.DeletionGracePeriodSeconds = nil
	if got := deletedAt(pod, now); got.After(now) {
		t.Errorf("never after now: %v", got)
	}
}

func TestReplacement_NoLabelsOrNoRequestsSayWhy(t *testing.T) {
	req := corev1.ResourceList{corev1.ResourceCPU: *resourceQty("1")}
	noLabels := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"pod-template-hash": "x"}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: req}}}}}
	if _, err := Replacement(noLabels, time.Minute, time.Now()); !errors.Is(err, ErrCannotKeepPlace) || !strings.Contains(err.Error(), "no labels") {
		t.Errorf("no labels: %v", err)
	}
	noRequests := noLabels.DeepCopy()
	noRequests.Labels["app"] = "web"
	noRequests.Spec.Containers[0].Resources.Requests = nil
	if _, err := Replacement(noRequests, time.Minute, time.Now()); !errors.Is(err, ErrCannotKeepPlace) || !strings.Contains(err.Error(), "requests no resources") {
		t.Errorf("no requests: %v", err)
	}
	ok := noRequests.DeepCopy()
	ok.Spec.Containers[0].Resources.Requests = req
	r, err := Replacement(ok, 90*time.Second+time.Millisecond, time.Now())
	if err != nil || *r.Spec.TTLSeconds != 91 || r.Spec.Resources.Cpu().MilliValue() != 1000 || r.Spec.Resources.Pods().Value() != 0 {
		t.Errorf("replacement %+v %v, want ttl rounded up to 91s, 1 CPU, no pods", r, err)
	}
}

func resourceQty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func TestReserveOnDeleteResults_AreTheOnesTheMetricStartsWith(t *testing.T) {
	counted := []string{resultHeld, resultNotNeeded, resultReleased, resultConsumed, resultExpired, resultInvalid, resultCannotKeep}
	if !slices.Equal(slices.Sorted(slices.Values(counted)), slices.Sorted(slices.Values(metrics.ReserveOnDeleteResults))) {
		t.Errorf("results counted %v, the metric starts with %v", counted, metrics.ReserveOnDeleteResults)
	}
}
