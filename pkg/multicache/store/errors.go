package store

import "errors"

// Errors the cache returns for the events it rejects (an Assumer's calls among them). A
// rejected event changes no store. Match them with errors.Is; the wrapping error names the
// object.
var (
	// ErrAlreadyExists: an add for an object the cache already holds.
	ErrAlreadyExists = errors.New("object already in the cache")
	// ErrNotFound: an update or delete for an object the cache does not hold.
	ErrNotFound = errors.New("object not in the cache")
	// ErrUIDMismatch: the event names an object the cache holds under another UID (the
	// object was deleted and recreated; the delete must come first).
	ErrUIDMismatch = errors.New("object in the cache has another UID")
	// ErrInvalidObject: the object cannot be cached as given (no name, or a pod to assume
	// without a node).
	ErrInvalidObject = errors.New("invalid object")

	// ErrPodAlreadyAssumed: assume of a pod that is already assumed.
	ErrPodAlreadyAssumed = errors.New("pod already assumed")
	// ErrPodAlreadyAdded: assume or add of a pod the API already reported bound to a node.
	ErrPodAlreadyAdded = errors.New("pod already added")
	// ErrPodNotAssumed: forget or finish-binding of a pod that is not assumed.
	ErrPodNotAssumed = errors.New("pod not assumed")
	// ErrPodUnknown: update or remove of a pod the cache does not hold.
	ErrPodUnknown = errors.New("pod unknown to the cache")
	// ErrPodAssumedNotConfirmed: an update reporting an assumed pod bound; it must be
	// confirmed with an add first.
	ErrPodAssumedNotConfirmed = errors.New("assumed pod must be confirmed by an add before it is updated")
	// ErrNodeMismatch: the event puts a pod on another node than the one the cache charged.
	ErrNodeMismatch = errors.New("pod is on another node than the cache holds")

	// ErrClaimNotAssumed: forget of a ResourceClaim whose allocation is not assumed.
	ErrClaimNotAssumed = errors.New("claim not assumed")
	// ErrClaimAllocated: assume of a ResourceClaim the API already shows allocated
	// otherwise, at the assumed version or a newer one.
	ErrClaimAllocated = errors.New("claim already allocated otherwise")
	// ErrClaimOutOfSync: assume of a ResourceClaim older than the version the cache holds
	// (from the API or a previous assume); read the claim again.
	ErrClaimOutOfSync = errors.New("claim older than the cache's")
	// ErrDeviceInUse: assume of a ResourceClaim whose allocation takes a device another
	// claim holds (alone, or by share when this one wants it alone).
	ErrDeviceInUse = errors.New("device held by another claim")
	// ErrNoDeviceStore: assume of a ResourceClaim while no enabled store counts devices.
	ErrNoDeviceStore = errors.New("no enabled store counts devices")
)
