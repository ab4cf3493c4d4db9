package stores

import (
	"errors"
	"fmt"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
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
		{store.ErrAlreadyExists, "already_exists"},
		{store.ErrNotFound, "not_found"},
		{store.ErrUIDMismatch, "uid_mismatch"},
		{store.ErrInvalidObject, "invalid_object"},
		{store.ErrPodAlreadyAssumed, "already_assumed"},
		{store.ErrPodAlreadyAdded, "already_added"},
		{store.ErrPodNotAssumed, "not_assumed"},
		{store.ErrPodUnknown, "unknown_pod"},
		{store.ErrPodAssumedNotConfirmed, "assumed_not_confirmed"},
		{store.ErrNodeMismatch, "node_mismatch"},
		{store.ErrClaimNotAssumed, "not_assumed"},
		{store.ErrClaimAllocated, "already_allocated"},
		{store.ErrClaimOutOfSync, "out_of_sync"},
		{store.ErrDeviceInUse, "device_in_use"},
		{store.ErrNoDeviceStore, "no_device_store"},
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
