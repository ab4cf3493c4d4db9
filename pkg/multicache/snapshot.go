package multicache

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a consistent copy of every enabled store at one generation of the cache,
// read without any lock: Reader.UpdateSnapshot refreshes it incrementally (only objects
// changed since its last update are copied, as kube-scheduler's cache does for its
// snapshot). It answers every query of Reader as the Reader answered when it was last
// updated: read one decision's inputs from one snapshot, not some from the Reader. A
// snapshot belongs to one goroutine: update it and read it from the same one. What it
// returns is shared with the snapshot and must not be modified. Get one from
// Reader.NewSnapshot (the zero value is not usable).
type Snapshot struct {
	s *handler.Snapshot
	// acct is how the cache charges pods (what a Fork charges with).
	acct store.Accounting
}

// SnapshotOptions shape a Snapshot.
type SnapshotOptions struct {
	// SubClusterKey and SubCluster, when set, restrict the node infos to the nodes labelled
	// key=value (the Node's labels, else the NMNode's, else the CNR's).
	SubClusterKey, SubCluster string
}

// Generation is the cache generation the snapshot reflects (0 before the first update).
func (s *Snapshot) Generation() int64 { return s.s.Generation() }

// NodeInfo returns the info of one node.
func (s *Snapshot) NodeInfo(name string) (*store.NodeInfo, bool) { return s.s.Nodes().Get(name) }

// NodeInfos returns the info of every node, in no particular order.
func (s *Snapshot) NodeInfos() []*store.NodeInfo { return slices.Clone(s.s.Nodes().List()) }

// AssumedPod returns the state of a pod that was assumed when the snapshot was updated:
// ok is false for a pod the API reported (PodAdded) as for a pod the cache did not hold.
// PodState answers for both.
func (s *Snapshot) AssumedPod(key types.NamespacedName) (store.PodStatus, bool) {
	return s.s.Pods().Assumed(key)
}

// PodState returns the state of a pod (assumed or added) at the snapshot's generation.
func (s *Snapshot) PodState(key types.NamespacedName) (store.PodStatus, bool) {
	return s.s.Pods().Get(key)
}

// PodsOnNode returns the pods charged to a node with their state, as Reader.PodsOnNode at
// the snapshot's generation; nil for a node the snapshot does not hold (unknown, or outside
// its sub-cluster).
func (s *Snapshot) PodsOnNode(node string) []store.PodStatus { return s.s.PodsOnNode(node) }

// PodGroupsForPod returns the groups the pod is a member of (PodGroupKeysOf) that the
// snapshot holds; nothing when the store is disabled.
func (s *Snapshot) PodGroupsForPod(pod *corev1.Pod) []store.PodGroup {
	var out []store.PodGroup
	for _, k := range PodGroupKeysOf(pod) {
		if g, ok := s.PodGroup(k); ok {
			out = append(out, g)
		}
	}
	return out
}

// PDBsForPod returns the disruption budgets that cover a pod, as Reader.PDBsForPod at the
// snapshot's generation (a budget matched by selector is found by a walk of the budgets).
func (s *Snapshot) PDBsForPod(pod *corev1.Pod) []store.PDB {
	if p := s.s.PDBs(); p != nil && pod != nil {
		return p.ForPod(pod)
	}
	return nil
}

// MovementSuggestions returns how many more pods of an owner each node should receive, as
// Reader.MovementSuggestions at the snapshot's generation.
func (s *Snapshot) MovementSuggestions(owner store.OwnerKey) map[string]int64 {
	if m := s.s.Movements(); m != nil {
		return movementstore.SuggestionsIn(m, owner)
	}
	return nil
}

// ReservationsOnNode returns the Reserved and Matched reservations of a node, by key, as
// Reader.ReservationsOnNode at the snapshot's generation.
func (s *Snapshot) ReservationsOnNode(node string) []store.Reservation {
	if r := s.s.Reservations(); r != nil {
		return reservationstore.OnNodeIn(r, node)
	}
	return nil
}

// MatchableReservations returns the Reserved reservations a pod may consume, best first,
// as Reader.MatchableReservations at the snapshot's generation.
func (s *Snapshot) MatchableReservations(pod *corev1.Pod) []store.Reservation {
	if r := s.s.Reservations(); r != nil && pod != nil {
		return reservationstore.MatchableIn(r, pod, s.s.Pods().Get)
	}
	return nil
}

// RoomHeldFrom returns, by node, the room held from a pod, as Reader.RoomHeldFrom at the
// snapshot's generation.
func (s *Snapshot) RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources {
	if r := s.s.Reservations(); r != nil && pod != nil {
		return reservationstore.HeldFromIn(r, pod, s.s.Pods().Get)
	}
	return nil
}

// NodeDevices returns a node's DRA devices, as Reader.NodeDevices at the snapshot's
// generation.
func (s *Snapshot) NodeDevices(node string) (store.NodeDevices, bool) {
	if d := s.s.Devices(); d != nil {
		return d.Get(node)
	}
	return store.NodeDevices{}, false
}

// PodGroup returns one pod group; nothing when the store is disabled.
func (s *Snapshot) PodGroup(key types.NamespacedName) (store.PodGroup, bool) {
	return getView(s.s.PodGroups(), key)
}

// PDB returns one disruption budget; nothing when the store is disabled.
func (s *Snapshot) PDB(key types.NamespacedName) (store.PDB, bool) {
	p := s.s.PDBs()
	if p == nil {
		return store.PDB{}, false
	}
	return p.Get(key)
}

// PDBsForOwner returns the disruption budgets that cover an owner's pods.
func (s *Snapshot) PDBsForOwner(owner store.OwnerKey) []store.PDB {
	p := s.s.PDBs()
	if p == nil {
		return nil
	}
	return p.ForOwner(owner)
}

// Movement returns one movement; nothing when the store is disabled.
func (s *Snapshot) Movement(name string) (store.Movement, bool) {
	return getView(s.s.Movements(), name)
}

// Reservation returns one reservation; nothing when the store is disabled.
func (s *Snapshot) Reservation(key types.NamespacedName) (store.Reservation, bool) {
	if r := s.s.Reservations(); r != nil {
		return reservationstore.GetIn(r, key)
	}
	return store.Reservation{}, false
}

// getView reads one object of a store's map snapshot (nil: the store is disabled).
func getView[K comparable, V any](part *store.MapSnapshot[K, V], key K) (V, bool) {
	if part == nil {
		var zero V
		return zero, false
	}
	return part.Get(key)
}

// Part returns the part of a store registered with WithStore (assert the store's own
// snapshot type), nil when that store is disabled. The built-in stores are read through
// the methods above.
func (s *Snapshot) Part(name store.Name) store.Snapshot {
	if slices.Contains(stores.FanOutOrder, name) {
		return nil
	}
	return s.s.Part(name)
}
