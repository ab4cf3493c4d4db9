package podstore

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

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
func (s *Store) Dump() any { return s.DumpDeferred()() }

// DumpDeferred implements stores.DeferredDumper: it copies each pod's key and status (a few
// words each) and renders them later.
func (s *Store) DumpDeferred() func() any {
	type copied struct {
		key types.NamespacedName
		st  stores.PodStatus
	}
	pods := make([]copied, 0, len(s.pods))
	for key, e := range s.pods {
		pods = append(pods, copied{key, e.PodStatus})
	}
	return func() any {
		out := make(map[string]PodDump, len(pods))
		for _, p := range pods {
			d := PodDump{Node: p.st.Pod.Spec.NodeName, State: p.st.State, Phase: string(p.st.Pod.Status.Phase), BindingFinished: p.st.BindingFinished}
			if !p.st.Deadline.IsZero() {
				deadline := p.st.Deadline
				d.Deadline = &deadline
			}
			out[p.key.String()] = d
		}
		return out
	}
}
