package stores

import "github.com/seed0f91f25e/multicache/pkg/multicache/store"

// Name identifies a store (defined in the public store package, so that a store written
// out of tree and a built-in one share it).
type Name = store.Name

// The built-in stores, in fan-out order: the order in which the handler calls them for every
// event. PodStore is last so that the others can still read a pod's previous state.
const (
	NodeStoreName        = store.NodeStoreName
	PodGroupStoreName    = store.PodGroupStoreName
	PDBStoreName         = store.PDBStoreName
	MovementStoreName    = store.MovementStoreName
	ReservationStoreName = store.ReservationStoreName
	PodStoreName         = store.PodStoreName
)

// FanOutOrder lists every store name in the fixed order events reach them.
var FanOutOrder = []Name{
	NodeStoreName, PodGroupStoreName, PDBStoreName, MovementStoreName, ReservationStoreName, DeviceStoreName, PodStoreName,
}

// Required reports whether a store cannot be disabled: every other store and every query
// depends on nodes and pods.
func Required(name Name) bool {
	return name == NodeStoreName || name == PodStoreName
}

// Kind is a kind of object the handler receives events for.
type Kind string

// The kinds of events. Owner stands for the workloads that own pods (ReplicaSet,
// StatefulSet, DaemonSet, Deployment).
const (
	KindPod         Kind = "Pod"
	KindNode        Kind = "Node"
	KindNMNode      Kind = "NMNode"
	KindCNR         Kind = "CustomNodeResource"
	KindPodGroup    Kind = "PodGroup"
	KindPDB         Kind = "PodDisruptionBudget"
	KindOwner       Kind = "Owner"
	KindMovement    Kind = "Movement"
	KindReservation Kind = "Reservation"
)

// Op is an operation on an object, as counted in the events metric.
type Op string

// The operations. Assume, FinishBinding and Forget come from sibling schedulers; Expire from
// the handler's own clock.
const (
	OpAdd           Op = "add"
	OpUpdate        Op = "update"
	OpDelete        Op = "delete"
	OpAssume        Op = "assume"
	OpFinishBinding Op = "finish_binding"
	OpForget        Op = "forget"
	OpExpire        Op = "expire"
)
