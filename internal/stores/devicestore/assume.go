package devicestore

import (
	"fmt"
	"maps"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A claim's allocation a scheduler assumes (kube-scheduler's SignalClaimPendingAllocation
// and AssumeClaimAfterAPICall) is charged like one the API shows, at once, and marked: the
// handler decides when it starts and ends (internal/handler/claims.go) and hands the store
// one claim per key, the assumed one while the assumption stands, so that nothing is
// counted twice. The mark ends with the next add, update or delete of the claim.

var _ store.ResourceClaimAssumer = (*Store)(nil)

func claimKey(claim *resourcev1.ResourceClaim) types.NamespacedName {
	return types.NamespacedName{Namespace: claim.Namespace, Name: claim.Name}
}

// CheckAssumeResourceClaim implements store.ResourceClaimAssumer: the claim's allocation
// may be charged unless it takes a device another claim holds alone, holds by share while
// this one wants it alone, or holds under the same share ID. The claim's own charge (an
// earlier assumption, the API's allocation) is no conflict: it is replaced.
func (s *Store) CheckAssumeResourceClaim(claim *resourcev1.ResourceClaim) error {
	key := claimKey(claim)
	for _, a := range allocationsOf(claim) {
		if other := s.holders[a.id].conflict(key, a.shareID); other != (types.NamespacedName{}) {
			return fmt.Errorf("%w: claim %s wants device %s, which claim %s%s holds; allocate another device, or forget %s first if its allocation failed",
				store.ErrDeviceInUse, key, a.id, other, s.assumedMark(other), other)
		}
	}
	return nil
}

// assumedMark is " (assumed)" for a claim whose charge is an assumption.
func (s *Store) assumedMark(key types.NamespacedName) string {
	if _, ok := s.assumed[key]; ok {
		return " (assumed)"
	}
	return ""
}

// conflict returns a claim other than key that keeps it from holding the device under
// shareID (alone when empty): one holding the same share, one holding the device alone,
// or, for key wanting it alone, one holding a share; none on a nil h.
func (h *holders) conflict(key types.NamespacedName, shareID string) types.NamespacedName {
	if h == nil {
		return types.NamespacedName{}
	}
	if c, ok := h.shares[shareID]; shareID != "" && ok && c != key {
		return c
	}
	for _, c := range h.dedicated {
		if c != key {
			return c
		}
	}
	if shareID == "" {
		for _, id := range slices.Sorted(maps.Keys(h.shares)) {
			if c := h.shares[id]; c != key {
				return c
			}
		}
	}
	return types.NamespacedName{}
}

// AssumeResourceClaim implements store.ResourceClaimAssumer: the assumed allocation
// replaces whatever the store charged for the claim (oldClaim, nil when nothing) and is
// marked assumed.
func (s *Store) AssumeResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim) {
	if oldClaim != nil {
		s.DeleteResourceClaim(oldClaim)
	}
	s.AddResourceClaim(newClaim)
	key := claimKey(newClaim)
	s.assumed[key] = struct{}{}
	s.touchClaim(key)
}

// unassume ends a claim's mark, if any, marking its devices' nodes changed.
func (s *Store) unassume(key types.NamespacedName) {
	if _, ok := s.assumed[key]; ok {
		delete(s.assumed, key)
		s.touchClaim(key)
	}
}

// touchClaim marks changed the nodes of the devices a claim holds.
func (s *Store) touchClaim(key types.NamespacedName) {
	for _, a := range s.claims[key] {
		s.touchDevice(a.id)
	}
}

// assumedHolder reports whether some claim holding the device is an assumption.
func (s *Store) assumedHolder(id DeviceID) bool {
	h := s.holders[id]
	if len(s.assumed) == 0 || h == nil {
		return false
	}
	for _, c := range h.dedicated {
		if _, ok := s.assumed[c]; ok {
			return true
		}
	}
	for _, c := range h.shares {
		if _, ok := s.assumed[c]; ok {
			return true
		}
	}
	return false
}

// AssumedClaims returns the claims whose charge is an assumption, with the devices each
// holds (sorted), keyed namespace/name.
func (s *Store) AssumedClaims() map[string][]string {
	out := make(map[string][]string, len(s.assumed))
	for key := range s.assumed {
		devices := []string{}
		for _, a := range s.claims[key] {
			devices = append(devices, a.id.String())
		}
		slices.Sort(devices)
		out[key.String()] = devices
	}
	return out
}
