package podstore

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodDump is the debug view of one pod.
type PodDump struct {
	Node            string         `json:"node"`
	State           store.PodState `json:"state"`
	Phase           string         `json:"phase,omitempty"`
	BindingFinished bool           `json:"bindingFinished,omitempty"`
	Deadline        *time.Time     `json:"deadline,omitempty"`
}

// Dump implements stores.Store: PodDump by namespace/name.
func (s *Store) Dump() any {
	out := make(map[string]PodDump, s.pods.Len())
	s.pods.Range(func(key types.NamespacedName, e *Entry) bool {
		out[key.String()] = DumpPod(e.PodStatus)
		return true
	})
	return out
}

// KeyedStatus is a pod's key and its status as the handler's dump copies it.
type KeyedStatus struct {
	Key    types.NamespacedName
	Status store.PodStatus
}

// DumpPod renders one copied status.
func DumpPod(st store.PodStatus) PodDump {
	d := PodDump{Node: st.Pod.Spec.NodeName, State: st.State, Phase: string(st.Pod.Status.Phase), BindingFinished: st.BindingFinished}
	if !st.Deadline.IsZero() {
		deadline := st.Deadline
		d.Deadline = &deadline
	}
	return d
}
