package v1alpha1

// Labels and annotations on core objects that multicache reads. They are the contract
// between multicache, the workloads and the controllers that create them.
const (
	// PodGroupLabel on a pod names the PodGroup (same namespace) the pod is a member of.
	PodGroupLabel = "multicache.dev/pod-group"

	// ResourceTypeAnnotation on a pod says which pool of its node the pod's requests are
	// charged to: ResourceTypeGuaranteed (the default when absent) or ResourceTypeBestEffort.
	ResourceTypeAnnotation = "multicache.dev/resource-type"

	// MovementNameAnnotation on a pod names the Movement whose suggestion the pod consumed.
	MovementNameAnnotation = "multicache.dev/movement-name"

	// ReserveOnDeleteAnnotation on a pod, on its controller (ReplicaSet, StatefulSet,
	// DaemonSet, Deployment) or on the controller's pod template asks multicache to keep the
	// pod's place on its node when it is deleted: "true" or "false" (strconv.ParseBool). The
	// pod's own value wins, then its controller's, then the controller's pod template's.
	ReserveOnDeleteAnnotation = "multicache.dev/reserve-on-delete"

	// ReplacesPodAnnotation on a Reservation names the deleted pod (same namespace) whose
	// place it keeps; multicache sets it on the Reservations it creates for reserve-on-delete.
	ReplacesPodAnnotation = "multicache.dev/replaces-pod"

	// ReplacesSinceAnnotation on a Reservation is when the pod it replaces was deleted
	// (RFC 3339). Pods that landed on the node since then may consume it (else only those
	// that landed after its creation), and its TTL counts from then.
	ReplacesSinceAnnotation = "multicache.dev/replaces-since"
)

// ResourceType is the value of ResourceTypeAnnotation.
type ResourceType string

const (
	// ResourceTypeGuaranteed charges a pod to the node's guaranteed allocatable resources.
	ResourceTypeGuaranteed ResourceType = "guaranteed"
	// ResourceTypeBestEffort charges a pod to the node's reclaimed (best-effort) pool that a
	// CustomNodeResource reports.
	ResourceTypeBestEffort ResourceType = "best-effort"
)
