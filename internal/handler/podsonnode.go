package handler

import (
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodsOnNode returns the pods charged to a node (NodeInfo.Pods: not terminal, bound or
// assumed there) with their state, by namespace/name; nil for a node the cache does not
// know. Reservation placeholders are not pods and are left out.
func (h *Handler) PodsOnNode(node string) []store.PodStatus {
	h.mu.RLock()
	defer h.mu.RUnlock()
	info, ok := h.nodes.Get(node)
	if !ok {
		return nil
	}
	return podsOn(info, h.pods.Get)
}

// podsOn pairs a node's pods with their states.
func podsOn(info *store.NodeInfo, state func(types.NamespacedName) (store.PodStatus, bool)) []store.PodStatus {
	out := make([]store.PodStatus, 0, len(info.Pods))
	for _, p := range info.Pods {
		st, ok := state(store.PodKey(p))
		if !ok { // never: a charged pod is in the pod store; say what the node holds
			st = store.PodStatus{State: store.PodAdded, Pod: p, APIPod: p}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pod, out[j].Pod
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// PodsOnNode is Handler.PodsOnNode at the snapshot's generation; nil for a node the
// snapshot does not hold (unknown, or outside its sub-cluster).
func (s *Snapshot) PodsOnNode(node string) []store.PodStatus {
	info, ok := s.Nodes().Get(node)
	if !ok {
		return nil
	}
	return podsOn(info, s.Pods().Get)
}

// Devices returns the devices of every node, or nil when the store is disabled.
func (s *Snapshot) Devices() *devicestore.Snapshot {
	return part[*devicestore.Snapshot](s, stores.DeviceStoreName)
}
