package store

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The views the built-in stores answer with, and multicache's Reader and Snapshot with
// them. A store's (and the Reader's) answer is built for the call: the caller owns its
// slices and maps. A snapshot's answer shares them with the snapshot (as kube-scheduler's
// NodeInfos do): read, never modify. The API objects they hold are always shared.

// PodGroup is what the cache derives for one pod group.
type PodGroup struct {
	// Key is the group's key in the cache: namespace/name, or namespace/<API group>/name for
	// a source other than multicache's own (multicache.PodGroupSourceOf splits it).
	Key types.NamespacedName
	// Source is the API the group comes from.
	Source PodGroupSource
	// PodGroup is the object; nil when only members exist.
	PodGroup *v1alpha1.PodGroup
	Counts   PodGroupCounts
	// Members are the member pods' keys.
	Members []types.NamespacedName
	// MinMemberReached is set when at least minMember members are placed.
	MinMemberReached bool
	// ScheduleStartTime is when the schedule timeout started: the status's time if set,
	// else the group's creation.
	ScheduleStartTime time.Time
	// TimeoutAt is when the group times out unless minMember are placed; zero for never.
	TimeoutAt time.Time
}

// MinMember is the group's gang size whatever its source (multicache's and
// scheduler-plugins' spec.minMember, Kubernetes' gang minCount, 1 for its basic policy);
// 0 while the cache knows the group only from its members.
func (g PodGroup) MinMember() int32 {
	if g.PodGroup == nil {
		return 0
	}
	return g.PodGroup.Spec.MinMember
}

// PodGroupCounts are a group's members by where they are.
type PodGroupCounts struct {
	// Pending members are not placed on a node yet.
	Pending int32 `json:"pending"`
	// Scheduled members are assumed or bound to a node, not running yet.
	Scheduled int32 `json:"scheduled"`
	Running   int32 `json:"running"`
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
}

// Total is the number of members.
func (c PodGroupCounts) Total() int32 {
	return c.Pending + c.Scheduled + c.Running + c.Succeeded + c.Failed
}

// Placed is the number of members that are or were on a node and did not fail: Active
// plus Succeeded. It is what the gang's phase compares with minMember.
func (c PodGroupCounts) Placed() int32 { return c.Scheduled + c.Running + c.Succeeded }

// Active is the number of members on a node and not terminal: Scheduled plus Running, the
// members whose pod has a node (bound by the API, or assumed there by a scheduler) and is
// in phase Pending (or Unknown) or Running. Succeeded, Failed and unplaced members are
// not counted. An assumed member counts as a bound one does, as it is charged to its node;
// a Reader's PodState tells them apart. What a descheduler compares with MinMember before
// evicting a member.
func (c PodGroupCounts) Active() int32 { return c.Scheduled + c.Running }

// Add counts pod (delta +1) or uncounts it (-1) by its phase and node: the pod group
// store's rule, which a Fork applies to the pods it moves (it changes with the store's).
func (c *PodGroupCounts) Add(pod *corev1.Pod, delta int32) {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		c.Succeeded += delta
	case corev1.PodFailed:
		c.Failed += delta
	case corev1.PodRunning:
		c.Running += delta
	default:
		if pod.Spec.NodeName != "" {
			c.Scheduled += delta
		} else {
			c.Pending += delta
		}
	}
}

// Phase derives the group's phase at time now (the timeout depends on it), as the status
// writer does; "" when only members exist.
func (g PodGroup) Phase(now time.Time) v1alpha1.PodGroupPhase {
	if g.PodGroup == nil {
		return ""
	}
	c, minMember := g.Counts, g.PodGroup.Spec.MinMember
	switch {
	case c.Succeeded >= minMember && c.Pending+c.Scheduled+c.Running == 0:
		return v1alpha1.PodGroupFinished
	case c.Failed > 0 && c.Total()-c.Failed < minMember:
		return v1alpha1.PodGroupFailed
	case c.Running+c.Succeeded >= minMember:
		return v1alpha1.PodGroupRunning
	case c.Placed() >= minMember:
		return v1alpha1.PodGroupScheduled
	case !g.TimeoutAt.IsZero() && !now.Before(g.TimeoutAt):
		return v1alpha1.PodGroupTimeout
	case c.Total() >= minMember:
		return v1alpha1.PodGroupPreScheduling
	default:
		return v1alpha1.PodGroupPending
	}
}

// PDB is a PodDisruptionBudget as the cache holds it.
type PDB struct {
	Key types.NamespacedName
	PDB *policyv1.PodDisruptionBudget
	// AllowedDisruptions is how many pods may be disrupted now (from the budget's status).
	AllowedDisruptions int32
	// Owners are the owners whose pods the budget covers, sorted.
	Owners []OwnerKey
}

// Movement is what the cache derives for one Movement (a descheduler's suggestions).
type Movement struct {
	Name string
	// Movement is the object; nil when only pods refer to it.
	Movement *v1alpha1.Movement
	Owners   []MovementOwner
}

// MovementOwner are a movement's suggestions for one owner.
type MovementOwner struct {
	Owner v1alpha1.OwnerInfo
	// Nodes are the suggested nodes in spec order, then other nodes pods landed on, by name.
	Nodes []MovementNode
}

// MovementNode is one node suggested for an owner and the pods that landed there.
type MovementNode struct {
	Node string
	// Desired is how many pods the descheduler wants there (0 for a node it did not
	// suggest but where a pod of the owner landed anyway).
	Desired int64
	// Actual are the owner's pods that consumed the movement and landed there, sorted.
	Actual []v1alpha1.TaskInfo
}

// Left is how many more pods the suggestion wants.
func (n MovementNode) Left() int64 { return max(n.Desired-int64(len(n.Actual)), 0) }

// Reservation is what the cache knows about one Reservation.
type Reservation struct {
	Key         types.NamespacedName
	Reservation *v1alpha1.Reservation
	Phase       v1alpha1.ReservationPhase
	// Node is where it is charged or matched ("" while Pending).
	Node       string
	ReservedAt time.Time
	ExpiresAt  time.Time
	// Owner is the pod that matched it.
	Owner *v1alpha1.PodReference
	// OwnerAssumed is set while the owner is only assumed (not yet confirmed by the API):
	// the match can still be undone.
	OwnerAssumed bool
	// Provisional marks a deleted pod's hold (reserve-on-delete) that no Reservation took
	// over yet: Reservation is the one the leader creates for it, not an API object.
	Provisional bool
	// Why says why a deleted pod's place is kept (its owner wants a replacement), or why it
	// was released early; "" for an ordinary reservation.
	Why string
	// AwaitingNode is the node the spec names while the cache does not know it: the
	// reservation is Pending, charging nothing, until the node appears.
	AwaitingNode string
}

// Resources returns what the reservation holds (from its spec).
func (r Reservation) Resources() Resources {
	if r.Reservation == nil {
		return Resources{}
	}
	return ResourcesFromList(r.Reservation.Spec.Resources)
}

// DeviceCounts count DRA devices: Total = Allocated + Free, only published devices counted
// as allocated; Assumed are the allocated ones a scheduler's assumption holds that the API
// does not show yet (counted in Allocated too).
type DeviceCounts struct {
	Total     int `json:"total"`
	Allocated int `json:"allocated"`
	Free      int `json:"free"`
	Assumed   int `json:"assumed,omitempty"`
}

// PoolDevices are the devices of one resource pool on a node.
type PoolDevices struct {
	DeviceCounts
	// Generation is the pool's newest generation, the only one counted.
	Generation int64 `json:"generation"`
	// Shared counts the devices reaching the node other than by its name (a node selector,
	// all nodes): the same devices are counted on every node they reach.
	Shared int `json:"shared,omitempty"`
	// Incomplete: the generation lacks some of its slices; Invalid: it names a device twice.
	// kube-scheduler allocates nothing from such a pool, and none of its devices is counted.
	Incomplete bool `json:"incomplete,omitempty"`
	Invalid    bool `json:"invalid,omitempty"`
}

// NodeDevices are the DRA devices of one node.
type NodeDevices struct {
	DeviceCounts
	// ByClass are the devices each DeviceClass accepts (a device may be in several).
	ByClass map[string]DeviceCounts `json:"byClass"`
	// ByPool are the devices of each pool, keyed driver/pool.
	ByPool map[string]PoolDevices `json:"byPool"`
}
