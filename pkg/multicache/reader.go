package multicache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Reader is the read-only API of the cache for sibling controllers in the same process,
// like kube-scheduler's SharedLister: every method copies its answer under the cache's read
// lock and releases it before returning, never sees a half-applied event, and is safe for
// concurrent use. Neither the lock nor any write is reachable through it. Objects inside
// answers (pods, nodes, CRs) are shared and must not be modified. Queries of a disabled
// store answer nothing.
//
// A store registered with WithStore is read from a snapshot (Snapshot.Part), which copies
// only what changed since its last update and is then read without any lock.
type Reader interface {
	// NodeInfo returns a copy of one node's info.
	NodeInfo(name string) (*store.NodeInfo, bool)
	// NodeInfos returns copies of every node's info, by name.
	NodeInfos() []*store.NodeInfo
	// PodState returns the state of a pod in the assumed-pod state machine.
	PodState(key types.NamespacedName) (store.PodStatus, bool)
	// PodsOnNode returns the pods charged to a node (NodeInfo.Pods: not terminal, bound or
	// assumed there) with their state (PodAssumed or PodAdded), by namespace/name; nil for a
	// node the cache does not know. Reservation placeholders are left out.
	PodsOnNode(node string) []store.PodStatus
	// PodGroup returns what the cache derives for a pod group (see PodGroupKey).
	PodGroup(key types.NamespacedName) (store.PodGroup, bool)
	// PodGroupsForPod returns the groups the pod is a member of (PodGroupKeysOf), those the
	// cache holds, read under one lock: none for a pod of no group or of a source the cache
	// does not follow.
	PodGroupsForPod(pod *corev1.Pod) []store.PodGroup
	// PDBsForPod returns the disruption budgets that cover a pod.
	PDBsForPod(pod *corev1.Pod) []store.PDB
	// PDBsForOwner returns the disruption budgets that cover an owner's pods.
	PDBsForOwner(owner store.OwnerKey) []store.PDB
	// Movement returns a movement's suggestions and the pods that consumed them.
	Movement(name string) (store.Movement, bool)
	// MovementSuggestions returns how many more pods of an owner each node should receive.
	MovementSuggestions(owner store.OwnerKey) map[string]int64
	// Reservation returns one reservation.
	Reservation(key types.NamespacedName) (store.Reservation, bool)
	// ReservationsOnNode returns the Reserved and Matched reservations of a node.
	ReservationsOnNode(node string) []store.Reservation
	// MatchableReservations returns the Reserved reservations a pod may consume, best first.
	MatchableReservations(pod *corev1.Pod) []store.Reservation
	// RoomHeldFrom returns, by node, the room that Reserved reservations and deleted pods'
	// holds keep and that pod may not consume (all but MatchableReservations(pod)), with
	// one pod slot each: what a scheduler leaves out of a node's free room when it places
	// pod. A node where nothing is held from the pod is absent.
	RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources
	// KeepsPlaceFor reports whether the place of leaving, a bound pod that is going (its
	// deletion was asked for, and a kubelet takes up to its grace period to stop it; or the
	// API removed it and the cache has not applied that yet), is to be kept for pod once the
	// cache sees it gone (reserve-on-delete): leaving or its owner asks for it, and the hold
	// would select pod. A controller creates the replacement as soon as the deletion is
	// asked for, before any hold exists: a scheduler prefers leaving's node for it. False
	// where no hold would be placed (leaving's node is gone, it requests nothing). Live
	// state only: a Snapshot does not hold the owners it reads.
	KeepsPlaceFor(leaving, pod *corev1.Pod) bool
	// NodeDevices returns a node's DRA devices: total, allocated (assumed claims included)
	// and free, by DeviceClass and by pool; false when the devices store is off or no
	// resource pool reaches the node.
	NodeDevices(node string) (store.NodeDevices, bool)

	// NewSnapshot returns an empty snapshot of the enabled stores; fill it with
	// UpdateSnapshot.
	NewSnapshot(opts SnapshotOptions) *Snapshot
	// UpdateSnapshot brings a snapshot up to date, copying only what changed since its
	// last update; it holds the read lock only while it copies.
	UpdateSnapshot(snap *Snapshot) error
}

// reader is the Reader over the handler. The handler answers most queries as they are
// (handlerReads, embedded); the handler itself sits in an unexported field. A sibling
// reaches the read methods only: the value handed to siblings is this wrapper, never the
// handler.
type reader struct {
	handlerReads
	h *handler.Handler
}

// handlerReads are the queries of Reader the handler answers itself (internal/handler's
// reader.go, which documents them).
type handlerReads interface {
	NodeInfo(name string) (*store.NodeInfo, bool)
	NodeInfos() []*store.NodeInfo
	PodState(key types.NamespacedName) (store.PodStatus, bool)
	PodsOnNode(node string) []store.PodStatus
	PodGroup(key types.NamespacedName) (store.PodGroup, bool)
	PDBsForPod(pod *corev1.Pod) []store.PDB
	PDBsForOwner(owner store.OwnerKey) []store.PDB
	Movement(name string) (store.Movement, bool)
	MovementSuggestions(owner store.OwnerKey) map[string]int64
	Reservation(key types.NamespacedName) (store.Reservation, bool)
	ReservationsOnNode(node string) []store.Reservation
	MatchableReservations(pod *corev1.Pod) []store.Reservation
	RoomHeldFrom(pod *corev1.Pod) map[string]store.Resources
	KeepsPlaceFor(leaving, pod *corev1.Pod) bool
	NodeDevices(node string) (store.NodeDevices, bool)
}

// readerOf is the Reader over h.
func readerOf(h *handler.Handler) reader { return reader{h, h} }

var _ Reader = reader{}

func (r reader) PodGroupsForPod(pod *corev1.Pod) []store.PodGroup {
	return r.h.PodGroups(PodGroupKeysOf(pod))
}

func (r reader) NewSnapshot(opts SnapshotOptions) *Snapshot {
	var so store.SnapshotOptions
	if key, value := opts.SubClusterKey, opts.SubCluster; key != "" {
		so.NodeFilter = func(info *store.NodeInfo) bool { return info.Labels()[key] == value }
	}
	return &Snapshot{s: r.h.NewSnapshot(so), acct: r.h.Config().Accounting()}
}

func (r reader) UpdateSnapshot(snap *Snapshot) error { return r.h.UpdateSnapshot(snap.s) }
