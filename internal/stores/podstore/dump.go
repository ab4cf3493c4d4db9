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
func (s *Store) Dump() any { return s.DumpDeferred()() }

// DumpDeferred implements stores.DeferredDumper: it copies each pod's key and status (a few
// words each) and renders them later.
func (s *Store) DumpDeferred() func() any {
	statuses := make([]KeyedStatus, 0, s.pods.Len())
	s.pods.Range(func(key types.NamespacedName, e *Entry) bool {
		statuses = append(statuses, KeyedStatus{key, e.PodStatus})
		return true
	})
	return func() any { return DumpPods(statuses) }
}

// KeyedStatus is a pod's key and its status as a dump copies it.
type KeyedStatus struct {
	Key    types.NamespacedName
	Status store.PodStatus
}

// DumpPods renders copied statuses: PodDump by namespace/name.
func DumpPods(statuses []KeyedStatus) map[string]PodDump {
	out := make(map[string]PodDump, len(statuses))
	for _, p := range statuses {
		out[p.Key.String()] = DumpPod(p.Status)
	}
	return out
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
