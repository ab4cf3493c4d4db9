package operator

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// decoded is a pod as an informer hands it out: every list a map of its own (a protobuf
// round trip, as from the API server), with managedFields.
func decoded(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := out.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	return out
}

func list(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// everyList is a pod with a resource list in every place one can be: init and regular
// containers, pod-level resources, overhead, and the statuses of an in-place resize.
func everyList(name, cpu, memory string) *corev1.Pod {
	rl := list(cpu, memory)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("50m", "64Mi")}}},
			Containers: []corev1.Container{
				{Name: "main", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}},
				{Name: "sidecar", Resources: corev1.ResourceRequirements{Requests: list("100m", memory)}},
			},
			Resources: &corev1.ResourceRequirements{Requests: list("2", "4Gi")},
			Overhead:  list("10m", "32Mi"),
		},
		Status: corev1.PodStatus{AllocatedResources: list("2", "4Gi"), Resources: &corev1.ResourceRequirements{Requests: list("2", "4Gi")}, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", AllocatedResources: rl, Resources: &corev1.ResourceRequirements{Requests: list(cpu, memory)},
		}}},
	}
}

func mapID(rl corev1.ResourceList) uintptr { return reflect.ValueOf(rl).Pointer() }

// TestPodTransform_PodsListingTheSameQuantitiesShareOneMapAndChargeTheSame: after the
// transform, two pods of the same shape hold the very same maps (and a Guaranteed
// container's requests and limits one map), every pod reads exactly as before (the same
// object but for managedFields), and kube-scheduler's requests (component-helpers) are
// unchanged.
func TestPodTransform_PodsListingTheSameQuantitiesShareOneMapAndChargeTheSame(t *testing.T) {
	transform := podTransform(newSharedResourceLists(), false)
	var pods []*corev1.Pod
	for i := range 3 {
		in := decoded(t, everyList(fmt.Sprint("p", i), "500m", "1Gi"))
		want := in.DeepCopy()
		want.ManagedFields = nil
		before := resourcehelper.PodRequests(in, resourcehelper.PodResourcesOptions{})
		out, err := transform(in)
		if err != nil {
			t.Fatal(err)
		}
		pod := out.(*corev1.Pod)
		if !equality.Semantic.DeepEqual(pod, want) {
			t.Errorf("pod %d changed beyond managedFields:\n got %+v\nwant %+v", i, pod.Spec, want.Spec)
		}
		if after := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}); !equality.Semantic.DeepEqual(after, before) {
			t.Errorf("pod %d requests %v, were %v", i, after, before)
		}
		pods = append(pods, pod)
	}
	first, second := pods[0], pods[1]
	main := first.Spec.Containers[0].Resources
	if mapID(main.Requests) != mapID(main.Limits) {
		t.Error("a Guaranteed container's requests and limits are two maps")
	}
	for name, pair := range map[string][2]corev1.ResourceList{
		"main requests":        {main.Requests, second.Spec.Containers[0].Resources.Requests},
		"sidecar requests":     {first.Spec.Containers[1].Resources.Requests, second.Spec.Containers[1].Resources.Requests},
		"init requests":        {first.Spec.InitContainers[0].Resources.Requests, second.Spec.InitContainers[0].Resources.Requests},
		"pod-level requests":   {first.Spec.Resources.Requests, second.Spec.Resources.Requests},
		"overhead":             {first.Spec.Overhead, second.Spec.Overhead},
		"allocated":            {first.Status.ContainerStatuses[0].AllocatedResources, second.Status.ContainerStatuses[0].AllocatedResources},
		"status resources":     {first.Status.ContainerStatuses[0].Resources.Requests, second.Status.ContainerStatuses[0].Resources.Requests},
		"pod allocated":        {first.Status.AllocatedResources, second.Status.AllocatedResources},
		"pod status resources": {first.Status.Resources.Requests, second.Status.Resources.Requests},
	} {
		if mapID(pair[0]) != mapID(pair[1]) {
			t.Errorf("%s: two pods of one shape hold two maps", name)
		}
	}
}

// TestPodTransform_OnlyEqualQuantitiesThatPrintTheSameAreShared: 1Gi and 1073741824 bytes
// are equal but print differently, so they stay apart; 0.5 and 500m print the same
// canonical 500m and may share. An empty or absent list stays as it was.
func TestPodTransform_OnlyEqualQuantitiesThatPrintTheSameAreShared(t *testing.T) {
	lists := newSharedResourceLists()
	binary := lists.share(list("1", "1Gi"))
	decimal := lists.share(list("1", "1073741824"))
	if mapID(binary) == mapID(decimal) {
		t.Error("1Gi and 1073741824 share a map: a reader would see the other's form")
	}
	if got := decimal[corev1.ResourceMemory]; got.String() != "1073741824" {
		t.Errorf("memory prints %s, want 1073741824", got.String())
	}
	half := lists.share(list("0.5", "1Gi"))
	milli := lists.share(list("500m", "1Gi"))
	if mapID(half) != mapID(milli) {
		t.Error("0.5 and 500m (both 500m canonically) do not share")
	}
	if lists.share(nil) != nil || len(lists.share(corev1.ResourceList{})) != 0 {
		t.Error("an absent or empty list changed")
	}
}

// TestPodTransform_TheTableStartsOverWhenFull: past maxSharedResourceLists distinct
// lists, the table starts over and keeps sharing.
func TestPodTransform_TheTableStartsOverWhenFull(t *testing.T) {
	lists := newSharedResourceLists()
	for i := range maxSharedResourceLists + 10 {
		lists.share(list(fmt.Sprintf("%dm", i+1), "1Gi"))
	}
	if n := len(lists.table.byID); n > maxSharedResourceLists {
		t.Errorf("the table holds %d lists, more than %d", n, maxSharedResourceLists)
	}
	a, b := lists.share(list("7", "7Gi")), lists.share(list("7", "7Gi"))
	if mapID(a) != mapID(b) {
		t.Error("no sharing after the table started over")
	}
}

// TestListID_WritesWhatQuantityStringPrints: the ID written in scratch space is each name
// with what Quantity.String prints, sorted by name, for every form a quantity may take
// (forms the parser keeps as written, "+1" or "1E3", included: a list holding them must
// not be shared with one of "1" or "1e3", which serialize otherwise); reusing the scratch
// space from list to list changes nothing.
func TestListID_WritesWhatQuantityStringPrints(t *testing.T) {
	values := []string{"0", "+1", "1E3", "1e+3", "1e03", "+500m", "1", "1000m", "250m", "1Gi", "1536Mi", "1073741824", "1e3", "12e-3", "0.5",
		"123456789012345678901234567890", "-2", "1.5Ki", "999999999999999999", "100Ei", "0.000000001"}
	var scratch []string
	var id []byte
	for i := 0; i < 400; i++ {
		rl := corev1.ResourceList{}
		for j := 0; j <= i%4; j++ {
			rl[corev1.ResourceName(fmt.Sprintf("r%d", (i*7+j*3)%5))] = resource.MustParse(values[(i*3+j*5)%len(values)])
		}
		want := ""
		names := make([]string, 0, len(rl))
		for n := range rl {
			names = append(names, string(n))
		}
		slices.Sort(names)
		for _, n := range names {
			q := rl[corev1.ResourceName(n)]
			want += n + "=" + q.String() + ";"
		}
		id = appendListID(id[:0], &scratch, rl)
		if string(id) != want || listID(rl) != want {
			t.Fatalf("list %v: ID %q (fresh %q), want %q", rl, id, listID(rl), want)
		}
	}
	if zero := resource.MustParse("0"); zero.String() != "0" {
		t.Errorf("the library's zero now prints %q", zero.String())
	}
}
