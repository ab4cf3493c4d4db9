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
