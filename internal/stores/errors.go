package stores

import (
	"errors"
	"fmt"
)

// Errors returned by the handler for events it rejects. A rejected event changes no store.
// Match them with errors.Is; the wrapping error names the object.
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
)

// EventError is a rejected event: what it was, for which object, and why.
type EventError struct {
	Kind Kind
	Op   Op
	Key  string
	Err  error
}

// Error implements error.
func (e *EventError) Error() string {
	return fmt.Sprintf("%s %s %s: %v", e.Op, e.Kind, e.Key, e.Err)
}

// Unwrap lets errors.Is match the reason.
func (e *EventError) Unwrap() error { return e.Err }

// Reason returns the short, stable name of the reason, for the result label of metrics.
func Reason(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{
		{ErrAlreadyExists, "already_exists"},
		{ErrNotFound, "not_found"},
		{ErrUIDMismatch, "uid_mismatch"},
		{ErrInvalidObject, "invalid_object"},
		{ErrPodAlreadyAssumed, "already_assumed"},
		{ErrPodAlreadyAdded, "already_added"},
		{ErrPodNotAssumed, "not_assumed"},
		{ErrPodUnknown, "unknown_pod"},
		{ErrPodAssumedNotConfirmed, "assumed_not_confirmed"},
		{ErrNodeMismatch, "node_mismatch"},
	} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	if err == nil {
		return "ok"
	}
	return "error"
}
