package multicache

import (
	"errors"
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestSiblings_TheAssumerAssumesClaimsThroughTheHandler: the sealed Assumer's claim methods
// reach the handler's assume path: a claim without an allocation is refused (not
// retryable), a device another claim holds is refused (retryable: the holder may forget
// it), an assumption is reported until forgotten, and a forget of nothing is refused.
func TestSiblings_TheAssumerAssumesClaimsThroughTheHandler(t *testing.T) {
	a := assumer{newHandler(t)}
	claim := func(name string, devices ...string) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
		if len(devices) > 0 {
			c.Status.Allocation = &resourcev1.AllocationResult{}
			for _, d := range devices {
				c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
					resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.example.com", Pool: "n1", Device: d})
			}
		}
		return c
	}
	if err := a.AssumeClaim(claim("c")); !errors.Is(err, store.ErrInvalidObject) || Retryable(err) {
		t.Errorf("assuming a claim without an allocation: %v, want ErrInvalidObject, not retryable", err)
	}
	if err := a.AssumeClaim(claim("c", "gpu0")); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.IsAssumedClaim(claim("c")); !ok || err != nil {
		t.Errorf("IsAssumedClaim after the assumption: %v, %v", ok, err)
	}
	if err := a.AssumeClaim(claim("d", "gpu0")); !errors.Is(err, store.ErrDeviceInUse) || !Retryable(err) {
		t.Errorf("assuming a device another claim holds: %v, want ErrDeviceInUse, retryable", err)
	}
	if err := a.ForgetClaim(claim("c")); err != nil {
		t.Error(err)
	}
	if ok, _ := a.IsAssumedClaim(claim("c")); ok {
		t.Error("a forgotten claim is still assumed")
	}
	if err := a.ForgetClaim(claim("c")); !errors.Is(err, store.ErrClaimNotAssumed) {
		t.Errorf("forgetting twice: %v, want ErrClaimNotAssumed", err)
	}
}

// TestRetryable_FalseWhereTheSameCallCannotSucceed: found in review. A sibling that follows
// Retryable must not loop on a refusal only a new read or a configuration change resolves.
func TestRetryable_FalseWhereTheSameCallCannotSucceed(t *testing.T) {
	for err, want := range map[error]bool{
		nil:                    false,
		store.ErrInvalidObject: false,
		fmt.Errorf("wrapped: %w", store.ErrClaimOutOfSync): false,
		store.ErrUIDMismatch:       false,
		store.ErrClaimAllocated:    false,
		store.ErrNoDeviceStore:     false,
		store.ErrDeviceInUse:       true,
		store.ErrPodAlreadyAssumed: true,
		store.ErrClaimNotAssumed:   false,
	} {
		if got := Retryable(err); got != want {
			t.Errorf("Retryable(%v) = %v, want %v", err, got, want)
		}
	}
}
