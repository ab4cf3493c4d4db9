package operator

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

func TestOwnerTransforms_KeepOnlyWhatTheOwnerFeedReads(t *testing.T) {
	full := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"big": "annotation"}, Labels: map[string]string{"l": "v"}},
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
		ptr.Deref(rs.Spec.Replicas, 0) != 3 {
		t.Errorf("lost what the feed reads: %+v", rs)
	}
	if len(rs.Spec.Template.Spec.Containers) != 0 || rs.Annotations != nil || rs.Spec.Template.Annotations != nil {
		t.Errorf("kept what the feed does not read: %+v", rs)
	}
	if len(transforms) != 4 {
		t.Errorf("%d owner types transformed, want 4", len(transforms))
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
