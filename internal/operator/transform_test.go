package operator

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func TestOwnerTransforms_KeepOnlyWhatTheOwnerFeedReads(t *testing.T) {
	full := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"big": "annotation", store.DeploymentRevisionAnnotation: "4"}, Labels: map[string]string{"l": "v"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "u3"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u2", Controller: ptr.To(true)},
			}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
		}},
	}
	transforms := ownerTransforms()
	var out any
	for obj, by := range transforms {
		if _, ok := obj.(*appsv1.ReplicaSet); ok {
			var err error
			if out, err = by.Transform(full); err != nil {
				t.Fatal(err)
			}
		}
	}
	rs, ok := out.(*appsv1.ReplicaSet)
	if !ok {
		t.Fatalf("transformed into %T", out)
	}
	if rs.Name != "web" || rs.Namespace != "ns" || rs.UID != "u1" || rs.ResourceVersion != "7" || rs.Spec.Template.Labels["app"] != "web" ||
		ptr.Deref(rs.Spec.Replicas, 0) != 3 || rs.Annotations[store.DeploymentRevisionAnnotation] != "4" {
		t.Errorf("lost what the feed reads: %+v", rs)
	}
	if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != "u2" || len(rs.OwnerReferences) != 1 {
		t.Errorf("owner references %v: want the controller's only", rs.OwnerReferences)
	}
	if len(rs.Spec.Template.Spec.Containers) != 0 || len(rs.Annotations) != 1 || rs.Spec.Template.Annotations != nil {
		t.Errorf("kept what the feed does not read: %+v", rs)
	}
	if len(transforms) != 5 {
		t.Errorf("%d owner types transformed, want 5", len(transforms))
	}
	// Anything else passes through.
	for _, by := range transforms {
		if got, _ := by.Transform("tombstone"); got != "tombstone" {
			t.Errorf("a foreign object was changed into %v", got)
		}
	}
}

func TestOwnerTransforms_KeepTheReserveOnDeleteAnnotation(t *testing.T) {
	full := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db",
			Annotations: map[string]string{"big": "annotation", v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b", v1alpha1.ReserveOnDeleteAnnotation: "false"}},
		}},
	}
	for obj, by := range ownerTransforms() {
		if _, ok := obj.(*appsv1.StatefulSet); !ok {
			continue
		}
		out, err := by.Transform(full)
		if err != nil {
			t.Fatal(err)
		}
		ss := out.(*appsv1.StatefulSet)
		if len(ss.Annotations) != 1 || ss.Annotations[v1alpha1.ReserveOnDeleteAnnotation] != "true" ||
			len(ss.Spec.Template.Annotations) != 1 || ss.Spec.Template.Annotations[v1alpha1.ReserveOnDeleteAnnotation] != "false" {
			t.Errorf("annotations %v, template %v: want the reserve-on-delete ones only", ss.Annotations, ss.Spec.Template.Annotations)
		}
	}
}

// TestOwnerTransforms_AJobKeepsWhatItsWantedCountIsComputedFrom: the stripped Job wants
// as many active pods as the full one, in every state the count depends on, and keeps
// neither its pod spec nor its other status.
func TestOwnerTransforms_AJobKeepsWhatItsWantedCountIsComputedFrom(t *testing.T) {
	var strip func(any) (any, error)
	for obj, by := range ownerTransforms() {
		if _, ok := obj.(*batchv1.Job); ok {
			strip = by.Transform
		}
	}
	if strip == nil {
		t.Fatal("no transform for Jobs")
	}
	full := func(edit func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "u1", ResourceVersion: "9",
				Annotations: map[string]string{"big": "annotation"}},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](10), Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
			}},
			Status: batchv1.JobStatus{Succeeded: 3, Active: 4, Ready: ptr.To[int32](4), Failed: 1},
		}
		edit(j)
		return j
	}
	for name, edit := range map[string]func(*batchv1.Job){
		"running":                 func(*batchv1.Job) {},
		"nil completions":         func(j *batchv1.Job) { j.Spec.Completions = nil; j.Status.Succeeded = 0 },
		"work queue, 1 succeeded": func(j *batchv1.Job) { j.Spec.Completions = nil },
		"nil parallelism":         func(j *batchv1.Job) { j.Spec.Parallelism = nil },
		"near its completions":    func(j *batchv1.Job) { j.Status.Succeeded = 8 },
		"uncounted succeeded": func(j *batchv1.Job) {
			j.Status.Succeeded = 8
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"p"}, Failed: []types.UID{"q"}}
		},
		"suspended": func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
		"complete": func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "long"}}
		},
		"managed elsewhere": func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/queue") },
	} {
		j := full(edit)
		out, err := strip(j)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := out.(*batchv1.Job)
		if !ok {
			t.Fatalf("%s: transformed into %T", name, out)
		}
		if got, want := reservationstore.JobWantsActive(s), reservationstore.JobWantsActive(j); ptr.Deref(got, -1) != ptr.Deref(want, -1) {
			t.Errorf("%s: the stripped Job wants %d active pods, the full one %d", name, ptr.Deref(got, -1), ptr.Deref(want, -1))
		}
		if s.UID != "u1" || s.ResourceVersion != "9" || s.Spec.Template.Labels["app"] != "train" {
			t.Errorf("%s: lost what the feed reads: %+v", name, s.ObjectMeta)
		}
		if len(s.Spec.Template.Spec.Containers) != 0 || s.Annotations != nil || s.Status.Active != 0 || s.Status.Ready != nil {
			t.Errorf("%s: kept what the feed does not read: %+v", name, s)
		}
	}
}
