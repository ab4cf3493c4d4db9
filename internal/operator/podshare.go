package operator

import (
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sharedPodMeta hands the pods of one workload one labels map, one owner references slice
// and one tolerations slice, as sharedResourceLists does their resource lists: the pods a
// ReplicaSet creates carry its template's labels and the same owner, and the admission
// plugins give most pods the same tolerations, yet each decoded pod holds copies of its
// own (a labels map of four entries and its strings are about 500 bytes). Cached objects
// are never modified, so sharing them changes nothing a reader can see.
type sharedPodMeta struct {
	labels      sharedTable[map[string]string]
	owners      sharedTable[[]metav1.OwnerReference]
	tolerations sharedTable[[]corev1.Toleration]
}

func newSharedPodMeta() *sharedPodMeta {
	return &sharedPodMeta{
		labels:      newSharedTable[map[string]string](),
		owners:      newSharedTable[[]metav1.OwnerReference](),
		tolerations: newSharedTable[[]corev1.Toleration](),
	}
}

// sharePod replaces pod's labels, owner references and tolerations with the shared ones of
// the same content.
func (t *sharedPodMeta) sharePod(pod *corev1.Pod) {
	if len(pod.Labels) > 0 {
		pod.Labels = t.labels.share(pod.Labels, appendLabelsID)
	}
	// The slices are clipped to their length, so that an append to a shared one (which no
	// reader may do) copies it rather than writing into another pod's spare room.
	if len(pod.OwnerReferences) > 0 {
		pod.OwnerReferences = t.owners.share(slices.Clip(pod.OwnerReferences), appendOwnersID)
	}
	if len(pod.Spec.Tolerations) > 0 {
		pod.Spec.Tolerations = t.tolerations.share(slices.Clip(pod.Spec.Tolerations), appendTolerationsID)
	}
}

// sharedTable hands out one value per distinct content ID, from a table of at most
// maxSharedResourceLists values that starts over when full (the objects that hold the
// earlier values keep them).
type sharedTable[V any] struct {
	mu   sync.Mutex
	byID map[string]V
	// id and keys are scratch space for the ID of the value at hand: a value already
	// held is found without allocating.
	id   []byte
	keys []string
}

func newSharedTable[V any]() sharedTable[V] { return sharedTable[V]{byID: map[string]V{}} }

// share returns the held value of v's content (appendID appends its ID), v itself when it
// is the first.
func (t *sharedTable[V]) share(v V, appendID func(id []byte, keys *[]string, v V) []byte) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.id = appendID(t.id[:0], &t.keys, v)
	if shared, ok := t.byID[string(t.id)]; ok {
		return shared
	}
	if len(t.byID) >= maxSharedResourceLists {
		clear(t.byID)
	}
	t.byID[string(t.id)] = v
	return v
}

// The IDs below write every field of their values, each with its length first, so two
// values of one ID are equal field by field (TestPodShare_TheIDsWriteEveryField fails when
// the API adds a field to an owner reference or a toleration).

func appendLabelsID(id []byte, keys *[]string, labels map[string]string) []byte {
	*keys = (*keys)[:0]
	for k := range labels {
		*keys = append(*keys, k)
	}
	slices.Sort(*keys)
	for _, k := range *keys {
		id = appendField(id, k)
		id = appendField(id, labels[k])
	}
	return id
}

func appendOwnersID(id []byte, _ *[]string, refs []metav1.OwnerReference) []byte {
	for _, r := range refs {
		id = appendField(id, r.APIVersion)
		id = appendField(id, r.Kind)
		id = appendField(id, r.Name)
		id = appendField(id, string(r.UID))
		id = appendBool(id, r.Controller)
		id = appendBool(id, r.BlockOwnerDeletion)
	}
	return id
}

func appendTolerationsID(id []byte, _ *[]string, tols []corev1.Toleration) []byte {
	for _, t := range tols {
		id = appendField(id, t.Key)
		id = appendField(id, string(t.Operator))
		id = appendField(id, t.Value)
		id = appendField(id, string(t.Effect))
		if t.TolerationSeconds == nil {
			id = append(id, '-')
		} else {
			id = strconv.AppendInt(id, *t.TolerationSeconds, 10)
		}
		id = append(id, ';')
	}
	return id
}

func appendField(id []byte, s string) []byte {
	id = strconv.AppendInt(id, int64(len(s)), 10)
	id = append(id, ':')
	return append(id, s...)
}

func appendBool(id []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(id, '-')
	case *v:
		return append(id, 't')
	default:
		return append(id, 'f')
	}
}
