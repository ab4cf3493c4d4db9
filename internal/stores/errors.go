package stores

import (
	"errors"
	"fmt"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The reasons the handler rejects an event, defined in the public store package so that a
// caller outside multicache matches them with errors.Is.
var (
	ErrAlreadyExists          = store.ErrAlreadyExists
	ErrNotFound               = store.ErrNotFound
	ErrUIDMismatch            = store.ErrUIDMismatch
	ErrInvalidObject          = store.ErrInvalidObject
	ErrPodAlreadyAssumed      = store.ErrPodAlreadyAssumed
	ErrPodAlreadyAdded        = store.ErrPodAlreadyAdded
	ErrPodNotAssumed          = store.ErrPodNotAssumed
	ErrPodUnknown             = store.ErrPodUnknown
	ErrPodAssumedNotConfirmed = store.ErrPodAssumedNotConfirmed
	ErrNodeMismatch           = store.ErrNodeMismatch
	ErrClaimNotAssumed        = store.ErrClaimNotAssumed
	ErrClaimAllocated         = store.ErrClaimAllocated
	ErrClaimOutOfSync         = store.ErrClaimOutOfSync
	ErrDeviceInUse            = store.ErrDeviceInUse
	ErrNoDeviceStore          = store.ErrNoDeviceStore
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
		{ErrClaimNotAssumed, "not_assumed"},
		{ErrClaimAllocated, "already_allocated"},
		{ErrClaimOutOfSync, "out_of_sync"},
		{ErrDeviceInUse, "device_in_use"},
		{ErrNoDeviceStore, "no_device_store"},
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
