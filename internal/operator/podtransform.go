package operator

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// podTransform strips managedFields, as from every object, clears the fields only the
// kubelet and the runtime read unless wholePods (clearRuntimeFields), makes the pod's
// resource lists shared with every other pod that lists the same quantities
// (sharedResourceLists), and its labels, owner references and tolerations with every pod
// that has the same (sharedPodMeta).
// A decoded ResourceList is a map of its own, about 700 bytes for cpu and memory, and a pod
// has one per container for requests and one for limits: at 150,000 pods they were 30% of
// the live heap (271 of 906 MB, heap profile of `make bench-e2e SIZE=large`), yet the pods
// of one workload, and the requests and limits of a Guaranteed container, list the same
// quantities. Cached objects are never modified (the informers hand them out without a
// copy), so sharing a map changes nothing a reader can see.
func podTransform(lists *sharedResourceLists, wholePods bool) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	meta := newSharedPodMeta()
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return out, err
		}
		if pod, ok := out.(*corev1.Pod); ok {
			if !wholePods {
				clearRuntimeFields(pod)
			}
			lists.sharePod(pod)
			meta.sharePod(pod)
		}
		return out, nil
	}
}

// maxSharedResourceLists bounds the table: past it, the table starts over (the pods that
// hold the earlier lists keep them).
const maxSharedResourceLists = 4096

// sharedResourceLists hands out one ResourceList per distinct content (sharedTable, keyed
// by appendListID).
type sharedResourceLists struct {
	table sharedTable[corev1.ResourceList]
}

func newSharedResourceLists() *sharedResourceLists {
	return &sharedResourceLists{table: newSharedTable[corev1.ResourceList]()}
}

// sharePod replaces the resource lists of pod's containers (spec and status) and of the pod
// itself (spec and status) with the shared ones of the same content.
func (t *sharedResourceLists) sharePod(pod *corev1.Pod) {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			t.shareRequirements(&cs[i].Resources)
		}
	}
	if r := pod.Spec.Resources; r != nil {
		t.shareRequirements(r)
	}
	pod.Spec.Overhead = t.share(pod.Spec.Overhead)
	pod.Status.AllocatedResources = t.share(pod.Status.AllocatedResources)
	if r := pod.Status.Resources; r != nil {
		t.shareRequirements(r)
	}
	for _, ss := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range ss {
			ss[i].AllocatedResources = t.share(ss[i].AllocatedResources)
			if r := ss[i].Resources; r != nil {
				t.shareRequirements(r)
			}
		}
	}
}

func (t *sharedResourceLists) shareRequirements(r *corev1.ResourceRequirements) {
	r.Requests = t.share(r.Requests)
	r.Limits = t.share(r.Limits)
}

// share returns the shared list with rl's content, rl itself when it is the first.
func (t *sharedResourceLists) share(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return rl
	}
	return t.table.share(rl, appendListID)
}

// listID is rl's content: each name with its quantity as Quantity.String prints it, sorted
// by name. Two lists of one ID hold quantities that compare equal and print (and serialize)
// the same.
func listID(rl corev1.ResourceList) string {
	var names []string
	return string(appendListID(nil, &names, rl))
}

// commonResourceNames are the names most resource lists hold, sorted.
var commonResourceNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceEphemeralStorage, corev1.ResourceMemory}

// appendListID appends listID(rl) to id, sorting the names in names (scratch space), so
// that nothing is allocated once id and names have grown to the size of the lists at hand
// (Quantity.String returns the string a decoded quantity keeps, for the forms the API
// server writes).
func appendListID(id []byte, names *[]string, rl corev1.ResourceList) []byte {
	*names = (*names)[:0]
	// Most lists name only common resources: looking them up in name order finds them
	// sorted, at less than the cost of starting an iteration of the map.
	for _, n := range commonResourceNames {
		if _, ok := rl[n]; ok {
			*names = append(*names, string(n))
		}
	}
	if len(*names) != len(rl) {
		*names = (*names)[:0]
		for n := range rl {
			*names = append(*names, string(n))
		}
		slices.Sort(*names)
	}
	for _, n := range *names {
		q := rl[corev1.ResourceName(n)]
		id = append(id, n...)
		id = append(id, '=')
		id = append(id, q.String()...)
		id = append(id, ';')
	}
	return id
}
