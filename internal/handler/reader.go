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

// readStore calls read with the enabled built-in store of that name, as its type T, under
// the read lock, and reports whether the store is enabled.
func readStore[T store.Store](h *Handler, name stores.Name, read func(T)) bool {
	s, ok := lookup[T](h, name)
	if !ok {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	read(s)
	return true
}

// ReadStore calls read with the enabled store of that name under the read lock, and
// reports whether the store is enabled. It is how a sibling controller queries a store the
// Reader does not cover (a store registered out of tree): read must only read, and return
// copies of what it keeps.
func (h *Handler) ReadStore(name stores.Name, read func(store.Store)) bool {
	return readStore(h, name, read)
}

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
func (h *Handler) PodGroup(key types.NamespacedName) (g store.PodGroup, ok bool) {
	readStore(h, stores.PodGroupStoreName, func(s *podgroupstore.Store) { g, ok = s.Get(key) })
	return g, ok
}

// PodGroups returns, under one read lock, the groups of keys the cache holds, in the order
// of keys; a key it does not hold is skipped.
func (h *Handler) PodGroups(keys []types.NamespacedName) (out []store.PodGroup) {
	readStore(h, stores.PodGroupStoreName, func(s *podgroupstore.Store) {
		for _, k := range keys {
			if g, found := s.Get(k); found {
				out = append(out, g)
			}
		}
	})
	return out
}

// PDBsForPod returns the disruption budgets that cover a pod.
func (h *Handler) PDBsForPod(pod *corev1.Pod) (out []store.PDB) {
	if pod != nil {
		readStore(h, stores.PDBStoreName, func(s *pdbstore.Store) { out = s.ForPod(pod) })
	}
	return out
}

// PDBsForOwner returns the disruption budgets that cover an owner's pods.
func (h *Handler) PDBsForOwner(owner store.OwnerKey) (out []store.PDB) {
	readStore(h, stores.PDBStoreName, func(s *pdbstore.Store) { out = s.ForOwner(owner) })
	return out
}

// Movement returns a movement's suggestions and the pods that consumed them.
func (h *Handler) Movement(name string) (m store.Movement, ok bool) {
	readStore(h, stores.MovementStoreName, func(s *movementstore.Store) { m, ok = s.Get(name) })
	return m, ok
}

// MovementSuggestions returns how many more pods of an owner each node should receive.
func (h *Handler) MovementSuggestions(owner store.OwnerKey) (out map[string]int64) {
	readStore(h, stores.MovementStoreName, func(s *movementstore.Store) { out = s.SuggestionsFor(owner) })
	return out
}

// Reservation returns one reservation.
func (h *Handler) Reservation(key types.NamespacedName) (r store.Reservation, ok bool) {
	readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { r, ok = s.Get(key) })
	return r, ok
}

// ReservationsOnNode returns the Reserved and Matched reservations of a node.
func (h *Handler) ReservationsOnNode(node string) (out []store.Reservation) {
	readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { out = s.OnNode(node) })
	return out
}

// MatchableReservations returns the Reserved reservations a pod may consume, best first.
func (h *Handler) MatchableReservations(pod *corev1.Pod) (out []store.Reservation) {
	if pod != nil {
		readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { out = s.MatchableFor(pod) })
	}
	return out
}

// RoomHeldFrom returns, by node, the room Reserved reservations and deleted pods' holds
// keep that pod may not consume (reservationstore.Store.HeldFrom); nil when the
// reservation store is disabled.
func (h *Handler) RoomHeldFrom(pod *corev1.Pod) (out map[string]store.Resources) {
	if pod != nil {
		readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { out = s.HeldFrom(pod) })
	}
	return out
}

// KeepsPlaceFor reports whether the place of leaving, a pod that is going from its node, is
// to be kept for pod once the cache sees it gone (reservationstore.Store.KeepsPlaceFor);
// false when the reservation store is off.
func (h *Handler) KeepsPlaceFor(leaving, pod *corev1.Pod) (keeps bool) {
	readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { keeps = s.KeepsPlaceFor(leaving, pod) })
	return keeps
}

// ReservationHolds returns the keys of the deleted pods' holds (reserve-on-delete) that no
// Reservation took over yet; Reservation(key) tells what each holds. The leader's
// replacement controller creates their Reservations.
func (h *Handler) ReservationHolds() (out []types.NamespacedName) {
	readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) { out = s.Holds() })
	return out
}

// ReservationsWhere returns the keys of the reservations whose view keep accepts. keep runs
// under the read lock: it must be quick and must not call the handler. It is not part of
// Reader: the leader's status writer uses it to find what the recorded statuses lag.
func (h *Handler) ReservationsWhere(keep func(store.Reservation) bool) (out []types.NamespacedName) {
	readStore(h, stores.ReservationStoreName, func(s *reservationstore.Store) {
		s.Each(func(v store.Reservation) bool {
			if keep(v) {
				out = append(out, v.Key)
			}
			return true
		})
	})
	return out
}

// NodeDevices returns a node's DRA devices (total, allocated, free; by DeviceClass and by
// pool); false when the devices store is off or no resource pool reaches the node.
func (h *Handler) NodeDevices(name string) (d store.NodeDevices, ok bool) {
	readStore(h, stores.DeviceStoreName, func(s *devicestore.Store) { d, ok = s.Node(name) })
	return d, ok
}
