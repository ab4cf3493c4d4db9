package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestObjectReplaced_PassesNewVersionsAndRelistedObjectsNotResyncs(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "7"}}
	relisted := pod.DeepCopy()
	newer := pod.DeepCopy()
	newer.ResourceVersion = "8"
	p := objectReplaced{}
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{"a new version", pod, newer, true},
		{"a relist: same version, new object", pod, relisted, true},
		{"a resync: the same object", pod, pod, false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: passes %v, want %v", tc.name, got, tc.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: pod}) || !p.Delete(event.DeleteEvent{Object: pod}) {
		t.Error("creates and deletes must pass")
	}
}
