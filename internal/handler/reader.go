package handler

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The queries below are the read API of sibling controllers in the same process, which
// pkg/multicache's Reader wraps. Every one holds the read lock only while it copies its
// answer, never sees a half-applied event, and is safe for concurrent use. Objects inside
// answers (pods, nodes, CRs) are shared and must not be modified. Queries of a disabled
// store answer nothing. The optional stores are looked up by name; a store registered out
// of tree is read through Handler.ReadStore or a snapshot's Part.

// NodeInfo returns a copy of one node's info.
func (h *Handler) NodeInfo(name string) (*store.NodeInfo, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	info, ok := h.nodes.Get(name)
	if !ok {
		return nil, false
	}
	return info.Clone(), true
}

// NodeInfos returns copies of every node's info, by name.
func (h *Handler) NodeInfos() []*store.NodeInfo {
	h.mu.RLock()
	out := make([]*store.NodeInfo, 0, h.nodes.Len())
	h.nodes.Range(func(info *store.NodeInfo) bool {
		out = append(out, info.Clone())
		return true
	})
	h.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PodState returns the state of a pod in the assumed-pod state machine.
func (h *Handler) PodState(key types.NamespacedName) (store.PodStatus, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.pods.Get(key)
}

// PodGroup returns what the cache derives for a pod group.
func (h *Handler) PodGroup(key types.NamespacedName) (store.PodGroup, bool) {
	s, ok := lookup[*podgroupstore.Store](h, stores.PodGroupStoreName)
	if !ok {
		return store.PodGroup{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Get(key)
}

// PDBsForPod returns the disruption budgets that cover a pod.
func (h *Handler) PDBsForPod(pod *corev1.Pod) []store.PDB {
	s, ok := lookup[*pdbstore.Store](h, stores.PDBStoreName)
	if !ok || pod == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.ForPod(pod)
}

// PDBsForOwner returns the disruption budgets that cover an owner's pods.
func (h *Handler) PDBsForOwner(owner store.OwnerKey) []store.PDB {
	s, ok := lookup[*pdbstore.Store](h, stores.PDBStoreName)
	if !ok {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.ForOwner(owner)
}

// Movement returns a movement's suggestions and the pods that consumed them.
func (h *Handler) Movement(name string) (store.Movement, bool) {
	s, ok := lookup[*movementstore.Store](h, stores.MovementStoreName)
	if !ok {
		return store.Movement{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Get(name)
}

// MovementSuggestions returns how many more pods of an owner each node should receive.
func (h *Handler) MovementSuggestions(owner store.OwnerKey) map[string]int64 {
	s, ok := lookup[*movementstore.Store](h, stores.MovementStoreName)
	if !ok {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.SuggestionsFor(owner)
}

// Reservation returns one reservation.
func (h *Handler) Reservation(key types.NamespacedName) (store.Reservation, bool) {
	s, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return store.Reservation{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Get(key)
}

// ReservationsOnNode returns the Reserved and Matched reservations of a node.
func (h *Handler) ReservationsOnNode(node string) []store.Reservation {
	s, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.OnNode(node)
}

// MatchableReservations returns the Reserved reservations a pod may consume, best first.
func (h *Handler) MatchableReservations(pod *corev1.Pod) []store.Reservation {
	s, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok || pod == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.MatchableFor(pod)
}

// ReservationsWhere returns the keys of the reservations whose view keep accepts. keep runs
// under the read lock: it must be quick and must not call the handler. It is not part of
// Reader: the leader's status writer uses it to find what the recorded statuses lag.
func (h *Handler) ReservationsWhere(keep func(store.Reservation) bool) []types.NamespacedName {
	s, ok := lookup[*reservationstore.Store](h, stores.ReservationStoreName)
	if !ok {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []types.NamespacedName
	s.Each(func(v store.Reservation) bool {
		if keep(v) {
			out = append(out, v.Key)
		}
		return true
	})
	return out
}

// NodeDevices returns a node's DRA devices (total, allocated, free; by DeviceClass and by
// pool); false when the devices store is off or no resource pool reaches the node.
func (h *Handler) NodeDevices(name string) (store.NodeDevices, bool) {
	s, ok := lookup[*devicestore.Store](h, stores.DeviceStoreName)
	if !ok {
		return store.NodeDevices{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Node(name)
}

// PodGroups returns, under one read lock, the groups of keys the cache holds, in the order
// of keys; a key it does not hold is skipped.
func (h *Handler) PodGroups(keys []types.NamespacedName) []store.PodGroup {
	s, ok := lookup[*podgroupstore.Store](h, stores.PodGroupStoreName)
	if !ok || len(keys) == 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []store.PodGroup
	for _, k := range keys {
		if g, found := s.Get(k); found {
			out = append(out, g)
		}
	}
	return out
}
