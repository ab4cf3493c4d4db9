package multicache

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The views a Reader and a Snapshot answer with: values the caller owns (slices and maps
// are copies), holding API objects that are shared and must not be modified.

// PodGroup is what the cache derives for one pod group.
type PodGroup struct {
	// Key is the group's key in the cache: namespace/name, or namespace/<API group>/name for
	// a source other than multicache's own (PodGroupSourceOf splits it).
	Key types.NamespacedName
	// Source is the API the group comes from.
	Source store.PodGroupSource
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

// PodGroupCounts are a group's members by where they are.
type PodGroupCounts struct {
	// Pending members are not placed on a node yet.
	Pending int32
	// Scheduled members are assumed or bound to a node, not running yet.
	Scheduled int32
	Running   int32
	Succeeded int32
	Failed    int32
}

// Total is the number of members.
func (c PodGroupCounts) Total() int32 { return podgroupstore.Counts(c).Total() }

// Placed is the number of members that are or were on a node and did not fail: Active
// plus Succeeded. It is what the gang's phase compares with minMember.
func (c PodGroupCounts) Placed() int32 { return podgroupstore.Counts(c).Placed() }

// Active is the number of members on a node and not terminal: Scheduled plus Running, the
// members whose pod has a node (bound by the API, or assumed there by a scheduler) and is
// in phase Pending (or Unknown) or Running. Succeeded, Failed and unplaced members are
// not counted. An assumed member counts as a bound one does, as it is charged to its node;
// Reader.PodState tells them apart. What a descheduler compares with MinMember before
// evicting a member.
func (c PodGroupCounts) Active() int32 { return c.Scheduled + c.Running }

// Phase derives the group's phase at time now (the timeout depends on it), as the status
// writer does.
func (g PodGroup) Phase(now time.Time) v1alpha1.PodGroupPhase {
	return podgroupstore.GroupStatus{
		Key: g.Key, Source: g.Source, PodGroup: g.PodGroup, Counts: podgroupstore.Counts(g.Counts), Members: g.Members,
		MinMemberReached: g.MinMemberReached, ScheduleStartTime: g.ScheduleStartTime, TimeoutAt: g.TimeoutAt,
	}.Phase(now)
}

func podGroupOf(g podgroupstore.GroupStatus) PodGroup {
	return PodGroup{
		Key: g.Key, Source: g.Source, PodGroup: g.PodGroup, Counts: PodGroupCounts(g.Counts), Members: g.Members,
		MinMemberReached: g.MinMemberReached, ScheduleStartTime: g.ScheduleStartTime, TimeoutAt: g.TimeoutAt,
	}
}

// PDB is a PodDisruptionBudget as the cache holds it.
type PDB struct {
	Key types.NamespacedName
	PDB *policyv1.PodDisruptionBudget
	// AllowedDisruptions is how many pods may be disrupted now (from the budget's status).
	AllowedDisruptions int32
	// Owners are the owners whose pods the budget covers, sorted.
	Owners []store.OwnerKey
}

func pdbOf(v pdbstore.PDBView) PDB {
	return PDB{Key: v.Key, PDB: v.PDB, AllowedDisruptions: v.AllowedDisruptions, Owners: v.Owners}
}

func pdbsOf(vs []pdbstore.PDBView) []PDB { return viewsOf(vs, pdbOf) }

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

func movementOf(v movementstore.MovementView) Movement {
	return Movement{Name: v.Name, Movement: v.Movement, Owners: viewsOf(v.Owners, func(o movementstore.OwnerSuggestions) MovementOwner {
		return MovementOwner{Owner: o.Owner, Nodes: viewsOf(o.Nodes, func(n movementstore.NodeSuggestion) MovementNode {
			return MovementNode{Node: n.Node, Desired: n.Desired, Actual: n.Actual}
		})}
	})}
}

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
	// was released.
	Why string
	// AwaitingNode is the node the spec names while the cache does not know it: the
	// reservation stays Pending, charging nothing, until the node appears.
	AwaitingNode string
}

// Resources returns what the reservation holds (from its spec).
func (r Reservation) Resources() store.Resources {
	if r.Reservation == nil {
		return store.Resources{}
	}
	return store.ResourcesFromList(r.Reservation.Spec.Resources)
}

func reservationOf(v reservationstore.View) Reservation {
	return Reservation{
		Key: v.Key, Reservation: v.Reservation, Phase: v.Phase, Node: v.Node, ReservedAt: v.ReservedAt, ExpiresAt: v.ExpiresAt,
		Owner: v.Owner, OwnerAssumed: v.OwnerAssumed, Provisional: v.Provisional, Why: v.Why, AwaitingNode: v.AwaitingNode,
	}
}

func reservationsOf(vs []reservationstore.View) []Reservation { return viewsOf(vs, reservationOf) }

// viewsOf converts a store's views into public ones (nil stays nil).
func viewsOf[V, P any](vs []V, view func(V) P) []P {
	if vs == nil {
		return nil
	}
	out := make([]P, len(vs))
	for i, v := range vs {
		out[i] = view(v)
	}
	return out
}
