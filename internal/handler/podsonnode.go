package handler

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
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

// The queries of Reader, answered from the snapshot's generation.

// PodState returns the state of a pod, as Handler.PodState answered at the snapshot's
// generation.
func (s *Snapshot) PodState(key types.NamespacedName) (store.PodStatus, bool) {
	return s.Pods().Get(key)
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

// PDBsForPod is Handler.PDBsForPod at the snapshot's generation.
func (s *Snapshot) PDBsForPod(pod *corev1.Pod) []store.PDB {
	p := s.PDBs()
	if p == nil || pod == nil {
		return nil
	}
	return p.ForPod(pod)
}

// MovementSuggestions is Handler.MovementSuggestions at the snapshot's generation.
func (s *Snapshot) MovementSuggestions(owner store.OwnerKey) map[string]int64 {
	m := s.Movements()
	if m == nil {
		return nil
	}
	return movementstore.SuggestionsIn(m, owner)
}

// Reservation is Handler.Reservation at the snapshot's generation.
func (s *Snapshot) Reservation(key types.NamespacedName) (store.Reservation, bool) {
	r := s.Reservations()
	if r == nil {
		return store.Reservation{}, false
	}
	return reservationstore.GetIn(r, key)
}

// ReservationsOnNode is Handler.ReservationsOnNode at the snapshot's generation.
func (s *Snapshot) ReservationsOnNode(node string) []store.Reservation {
	r := s.Reservations()
	if r == nil {
		return nil
	}
	return reservationstore.OnNodeIn(r, node)
}

// MatchableReservations is Handler.MatchableReservations at the snapshot's generation.
func (s *Snapshot) MatchableReservations(pod *corev1.Pod) []store.Reservation {
	r := s.Reservations()
	if r == nil || pod == nil {
		return nil
	}
	return reservationstore.MatchableIn(r, pod, s.Pods().Get)
}

// RoomHeldFrom is Handler.RoomHeldFrom at the snapshot's generation.
func (s *Snapshot) RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources {
	r := s.Reservations()
	if r == nil || pod == nil {
		return nil
	}
	return reservationstore.HeldFromIn(r, pod, s.Pods().Get)
}

// Devices returns the devices of every node, or nil when the store is disabled.
func (s *Snapshot) Devices() *devicestore.Snapshot {
	return part[*devicestore.Snapshot](s, stores.DeviceStoreName)
}

// NodeDevices is Handler.NodeDevices at the snapshot's generation.
func (s *Snapshot) NodeDevices(node string) (store.NodeDevices, bool) {
	d := s.Devices()
	if d == nil {
		return store.NodeDevices{}, false
	}
	return d.Get(node)
}
