package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// TestPodPredicates_SplitNewVersionsFromRelistedObjects: the pod feed takes new versions,
// creates and deletes; the relist controller only the objects a relist decoded again at the
// same version; a resync (the same object) goes to neither.
func TestPodPredicates_SplitNewVersionsFromRelistedObjects(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "7"}}
	relisted := pod.DeepCopy()
	newer := pod.DeepCopy()
	newer.ResourceVersion = "8"
	feed, relist := predicate.ResourceVersionChangedPredicate{}, sameVersionReplaced{}
	for _, tc := range []struct {
		name             string
		old, new         *corev1.Pod
		toFeed, toRelist bool
	}{
		{"a new version", pod, newer, true, false},
		{"a relist: same version, new object", pod, relisted, false, true},
		{"a resync: the same object", pod, pod, false, false},
	} {
		e := event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}
		if got := feed.Update(e); got != tc.toFeed {
			t.Errorf("%s: the feed takes it %v, want %v", tc.name, got, tc.toFeed)
		}
		if got := relist.Update(e); got != tc.toRelist {
			t.Errorf("%s: the relist controller takes it %v, want %v", tc.name, got, tc.toRelist)
		}
	}
	if relist.Create(event.CreateEvent{Object: pod}) || relist.Delete(event.DeleteEvent{Object: pod}) || relist.Generic(event.GenericEvent{Object: pod}) {
		t.Error("the relist controller takes only updates")
	}
	if !feed.Create(event.CreateEvent{Object: pod}) || !feed.Delete(event.DeleteEvent{Object: pod}) {
		t.Error("the feed must take creates and deletes")
	}
}
