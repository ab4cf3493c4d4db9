package podstore

import (
	"time"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// PodDump is the debug view of one pod.
type PodDump struct {
	Node            string          `json:"node"`
	State           stores.PodState `json:"state"`
	Phase           string          `json:"phase,omitempty"`
	BindingFinished bool            `json:"bindingFinished,omitempty"`
	Deadline        *time.Time      `json:"deadline,omitempty"`
}

// Dump implements stores.Store: PodDump by namespace/name.
func (s *Store) Dump() any {
	out := make(map[string]PodDump, len(s.pods))
	for key, e := range s.pods {
		d := PodDump{Node: e.Pod.Spec.NodeName, State: e.State, Phase: string(e.Pod.Status.Phase), BindingFinished: e.BindingFinished}
		if !e.Deadline.IsZero() {
			deadline := e.Deadline
			d.Deadline = &deadline
		}
		out[key.String()] = d
	}
	return out
}
