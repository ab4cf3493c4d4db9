package stores

// Name identifies a store. The names are the values of the --stores flag and of the
// `store` label of the metrics, and the keys of the debug dump.
type Name string

// The built-in stores, in fan-out order: the order in which the handler calls them for every
// event. PodStore is last so that the others can still read a pod's previous state.
const (
	NodeStoreName        Name = "nodes"
	PodGroupStoreName    Name = "podgroups"
	PDBStoreName         Name = "pdbs"
	MovementStoreName    Name = "movements"
	ReservationStoreName Name = "reservations"
	PodStoreName         Name = "pods"
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
