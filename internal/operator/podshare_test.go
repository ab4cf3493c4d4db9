package operator

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// workloadPod is pod i of a ReplicaSet rs, as the API server holds it: the template's
// labels, the owner, the tolerations the admission plugins add.
func workloadPod(rs string, i int) *corev1.Pod {
	p := everyList(fmt.Sprintf("%s-%d", rs, i), "500m", "1Gi")
	p.Labels = map[string]string{"app": rs, "tier": "web", "pod-template-hash": "7d4b9c8f6d"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: "uid-" + "rs",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	p.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}}
	return p
}

func sliceID[T any](s []T) uintptr { return reflect.ValueOf(s).Pointer() }

// TestPodShare_PodsOfOneWorkloadShareTheirMetaAndReadAsBefore: after the transform, two pods
// of one ReplicaSet hold the very same labels map, owner references and tolerations, each
// pod reads exactly as before (but managedFields), and a pod that differs in any one of
// them keeps its own.
func TestPodShare_PodsOfOneWorkloadShareTheirMetaAndReadAsBefore(t *testing.T) {
	transform := podTransform(newSharedResourceLists(), false)
	pass := func(p *corev1.Pod) *corev1.Pod {
		in := decoded(t, p)
		want := in.DeepCopy()
		want.ManagedFields = nil
		out, err := transform(in)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Pod)
		if !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("pod %s changed beyond managedFields", p.Name)
		}
		return got
	}
	a, b := pass(workloadPod("web", 0)), pass(workloadPod("web", 1))
	if reflect.ValueOf(a.Labels).Pointer() != reflect.ValueOf(b.Labels).Pointer() ||
		sliceID(a.OwnerReferences) != sliceID(b.OwnerReferences) || sliceID(a.Spec.Tolerations) != sliceID(b.Spec.Tolerations) {
		t.Error("two pods of one workload hold their own labels, owners or tolerations")
	}
	other := workloadPod("web", 2)
	other.Labels["canary"] = "true"
	other.OwnerReferences[0].BlockOwnerDeletion = ptr.To(false)
	other.Spec.Tolerations[1].TolerationSeconds = ptr.To[int64](30)
	c := pass(other)
	if reflect.ValueOf(c.Labels).Pointer() == reflect.ValueOf(a.Labels).Pointer() ||
		sliceID(c.OwnerReferences) == sliceID(a.OwnerReferences) || sliceID(c.Spec.Tolerations) == sliceID(a.Spec.Tolerations) {
		t.Error("a pod that differs shares the others' labels, owners or tolerations")
	}
	// A label value that would read as another split of the same bytes stays apart.
	x, y := workloadPod("web", 3), workloadPod("web", 4)
	x.Labels = map[string]string{"a": "b1:c"}
	y.Labels = map[string]string{"a": "b", "1:c": ""}
	if px, py := pass(x), pass(y); reflect.ValueOf(px.Labels).Pointer() == reflect.ValueOf(py.Labels).Pointer() {
		t.Error("two different label sets share a map")
	}
}

// TestPodShare_TheIDsWriteEveryField: the IDs write each field of an owner reference and
// of a toleration; a field the API adds fails this until the ID writes it too.
func TestPodShare_TheIDsWriteEveryField(t *testing.T) {
	for typ, written := range map[reflect.Type]int{
		reflect.TypeFor[metav1.OwnerReference](): 6, // ownersID
		reflect.TypeFor[corev1.Toleration]():     5, // tolerationsID
	} {
		if typ.NumField() != written {
			t.Errorf("%s has %d fields, its ID writes %d: write the new ones", typ, typ.NumField(), written)
		}
	}
}
