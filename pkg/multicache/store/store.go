package store

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// Store is what every store implements.
type Store interface {
	// Name identifies the store.
	Name() Name
	// Len is the number of objects the store holds (the multicache_store_objects metric).
	Len() int
	// Dump returns a JSON-serialisable view of the store, for the debug server. It is called
	// with the handler's read lock held and encoded after the lock is released: return a
	// copy that shares nothing the store changes, and keep it cheap (events wait meanwhile).
	Dump() any
	// CheckInvariants returns every invariant the store finds violated.
	CheckInvariants() []error
	// NewSnapshot returns an empty snapshot of the store, for UpdateSnapshot to fill.
	NewSnapshot(opts SnapshotOptions) Snapshot
	// UpdateSnapshot brings snap, last updated at generation since, up to date by copying
	// only what changed after since (everything when since is 0).
	UpdateSnapshot(snap Snapshot, since int64)
}

// DeferredChecker is implemented by the stores whose invariant check is costly (a
// recomputation per pod): CheckInvariantsDeferred runs under the handler's lock, checks
// what can only be read there and copies what the rest of the check needs; the function it
// returns finishes the check after the lock is released, so that the verify loop does not
// stop events from being applied. Objects the cache holds are never mutated, so the finish
// may read them without the lock.
type DeferredChecker interface {
	CheckInvariantsDeferred() func() []error
}

// TotalsRebuilder is implemented by the stores that keep totals as events change them
// (rather than counting on each read) and whose CheckInvariants compares them with a count
// of the objects they hold. When the handler's check, run again under one hold of its lock,
// confirms violations, it calls RebuildTotals under its write lock: a store whose last
// check found its totals wrong recounts them from its objects and returns what it corrected
// (nil when its last check found them right, or they agree by now). The handler counts each
// rebuild in multicache_kept_totals_rebuilt_total and logs the corrections.
type TotalsRebuilder interface {
	RebuildTotals() []string
}

// Snapshot is a store's part of a handler snapshot: a copy readers use without any lock.
type Snapshot interface {
	// StoreName is the store the snapshot copies.
	StoreName() Name
}

// SnapshotOptions shape a snapshot.
type SnapshotOptions struct {
	// NodeFilter, when set, restricts the node infos of the snapshot to the nodes it accepts
	// (a sub-cluster). Stores whose objects do not live on nodes ignore it.
	NodeFilter func(*NodeInfo) bool
}

// PodHandler receives pod events. Pods arrive bound or not (NodeName may be empty), assumed
// or confirmed by the API; Handle.GetPodState tells which while the event is applied.
type PodHandler interface {
	AddPod(pod *corev1.Pod)
	UpdatePod(oldPod, newPod *corev1.Pod)
	DeletePod(pod *corev1.Pod)
}

// NodeHandler receives Node events.
type NodeHandler interface {
	AddNode(node *corev1.Node)
	UpdateNode(oldNode, newNode *corev1.Node)
	DeleteNode(node *corev1.Node)
}

// NMNodeHandler receives NMNode events.
type NMNodeHandler interface {
	AddNMNode(nmNode *v1alpha1.NMNode)
	UpdateNMNode(oldNMNode, newNMNode *v1alpha1.NMNode)
	DeleteNMNode(nmNode *v1alpha1.NMNode)
}

// CNRHandler receives CustomNodeResource events.
type CNRHandler interface {
	AddCNR(cnr *v1alpha1.CustomNodeResource)
	UpdateCNR(oldCNR, newCNR *v1alpha1.CustomNodeResource)
	DeleteCNR(cnr *v1alpha1.CustomNodeResource)
}

// PodGroupHandler receives PodGroup events.
type PodGroupHandler interface {
	AddPodGroup(pg *v1alpha1.PodGroup)
	UpdatePodGroup(oldPG, newPG *v1alpha1.PodGroup)
	DeletePodGroup(pg *v1alpha1.PodGroup)
}

// PDBHandler receives PodDisruptionBudget events.
type PDBHandler interface {
	AddPDB(pdb *policyv1.PodDisruptionBudget)
	UpdatePDB(oldPDB, newPDB *policyv1.PodDisruptionBudget)
	DeletePDB(pdb *policyv1.PodDisruptionBudget)
}

// OwnerHandler receives workload owner events.
type OwnerHandler interface {
	AddOwner(owner *Owner)
	UpdateOwner(oldOwner, newOwner *Owner)
	DeleteOwner(owner *Owner)
}

// MovementHandler receives Movement events.
type MovementHandler interface {
	AddMovement(m *v1alpha1.Movement)
	UpdateMovement(oldM, newM *v1alpha1.Movement)
	DeleteMovement(m *v1alpha1.Movement)
}

// ReservationHandler receives Reservation events.
type ReservationHandler interface {
	AddReservation(r *v1alpha1.Reservation)
	UpdateReservation(oldR, newR *v1alpha1.Reservation)
	DeleteReservation(r *v1alpha1.Reservation)
}

// ResourceSliceHandler receives ResourceSlice events (resource.k8s.io/v1, DRA).
type ResourceSliceHandler interface {
	AddResourceSlice(slice *resourcev1.ResourceSlice)
	UpdateResourceSlice(oldSlice, newSlice *resourcev1.ResourceSlice)
	DeleteResourceSlice(slice *resourcev1.ResourceSlice)
}

// ResourceClaimHandler receives ResourceClaim events (resource.k8s.io/v1, DRA).
type ResourceClaimHandler interface {
	AddResourceClaim(claim *resourcev1.ResourceClaim)
	UpdateResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim)
	DeleteResourceClaim(claim *resourcev1.ResourceClaim)
}

// DeviceClassHandler receives DeviceClass events (resource.k8s.io/v1, DRA).
type DeviceClassHandler interface {
	AddDeviceClass(class *resourcev1.DeviceClass)
	UpdateDeviceClass(oldClass, newClass *resourcev1.DeviceClass)
	DeleteDeviceClass(class *resourcev1.DeviceClass)
}

// PodAssumer is implemented by a PodHandler that must tell a pod a scheduler assumes from a
// pod the API reports (the ReservationStore: an assumed pod may consume a reservation a
// reported one may not). An assumption reaches such a store through AssumePod instead of
// AddPod or UpdatePod (oldPod is nil for an add).
type PodAssumer interface {
	AssumePod(oldPod, newPod *corev1.Pod)
}

// ResourceClaimAssumer is implemented by a ResourceClaimHandler that must tell a claim's
// allocation a scheduler assumes from one the API shows (the devices store marks it in its
// views and dump). An assumption reaches such a store through AssumeResourceClaim instead of
// AddResourceClaim or UpdateResourceClaim (oldClaim is nil for an add, else the claim the
// store is charged with); the assumption ends with an UpdateResourceClaim to the API's claim
// or a DeleteResourceClaim. CheckAssumeResourceClaim is asked first, for every such store:
// an error (wrapping ErrDeviceInUse, naming the device and its holder) refuses the
// assumption, and no store sees it.
type ResourceClaimAssumer interface {
	CheckAssumeResourceClaim(claim *resourcev1.ResourceClaim) error
	AssumeResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim)
}
