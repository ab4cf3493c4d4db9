package handler

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A scheduler that allocates devices assumes the claim's allocation in process, as
// kube-scheduler's DRA plugin does (SignalClaimPendingAllocation before it writes the
// claim's status, AssumeClaimAfterAPICall with the claim the API returned): the allocation
// counts at once, and until the API shows the claim allocated at the assumed version or a
// newer one (kube-scheduler's assume cache lets the informer's object replace an assumed one
// by resourceVersion), the claim is deleted, or the scheduler forgets it; an assumption
// known to be written ends with any newer version (assumedClaim). Like an assumed pod it
// never expires.
//
// The stores are handed one claim per key: the assumed one while the assumption stands,
// else the API's. So the API's claim is recorded as last seen (drift compares it with the
// informer) but reaches no store until it ends the assumption:
//
//	assume (not assumed)         -> assume(API's claim or nil, assumed)
//	assume (assumed)             -> assume(previous assumption, assumed)   version not older
//	API claim, allocated, at or
//	  after the assumed version  -> update(assumed, API's)                 the API wins
//	API claim after a written
//	  assumption's version       -> update(assumed, API's)                 allocated or not
//	API claim, another UID       -> update(assumed, API's)
//	API claim otherwise          -> nothing (last seen only; the assumption stands)
//	API delete                   -> delete(assumed)
//	forget                       -> update(assumed, API's claim) or delete(assumed)
//
// A store implementing store.ResourceClaimAssumer (the devices store) takes an assumption
// through AssumeResourceClaim and may refuse it beforehand (a device another claim holds);
// any other ResourceClaimHandler sees it as an add or update.

// claimAssumptions are the handler's assumed claims and the stores' checks.
type claimAssumptions struct {
	assumed map[types.NamespacedName]assumedClaim
	// checks are the ResourceClaimAssumers' CheckAssumeResourceClaim, in fan-out order.
	checks []func(*resourcev1.ResourceClaim) error
}

// AssumeClaim charges claim.Status.Allocation, the allocation a scheduler made, before the
// API shows it. The claim is the one the scheduler read (pending allocation) or the one the
// API returned for its status update. Refused, changing nothing: a claim without name or
// allocation (ErrInvalidObject); no enabled store counting devices (ErrNoDeviceStore);
// another UID than the claim the cache holds (ErrUIDMismatch); a version older than the
// cache's (ErrClaimOutOfSync); a claim the API already shows allocated otherwise at this
// version or a newer one (ErrClaimAllocated; allocated the same way it is counted already,
// and the call does nothing); a device another claim holds (ErrDeviceInUse).
func (h *Handler) AssumeClaim(claim *resourcev1.ResourceClaim) error {
	if claim == nil {
		return h.rejectUnlocked(stores.KindResourceClaim, stores.OpAssume, "<nil>", fmt.Errorf("%w: nil claim", store.ErrInvalidObject))
	}
	key := keyOf(claim)
	switch {
	case claim.Name == "" || claim.Namespace == "":
		return h.rejectUnlocked(stores.KindResourceClaim, stores.OpAssume, key.String(),
			fmt.Errorf("%w: a claim to assume needs a namespace and a name", store.ErrInvalidObject))
	case claim.Status.Allocation == nil:
		return h.rejectUnlocked(stores.KindResourceClaim, stores.OpAssume, key.String(),
			fmt.Errorf("%w: claim %s has no status.allocation: assume the claim with the allocation the scheduler made", store.ErrInvalidObject, key))
	}
	claim = claim.DeepCopy() // the caller's object may change after the call; the cache's never do
	h.mu.Lock()
	defer h.mu.Unlock()
	reject := func(err error) error { return h.reject(stores.KindResourceClaim, stores.OpAssume, key.String(), err) }
	if len(h.claimKind.subs) == 0 {
		return reject(fmt.Errorf("%w: enable the %q store to assume claims", store.ErrNoDeviceStore, stores.DeviceStoreName))
	}
	api, seen := h.claimKind.get(key)
	a, assumed := h.claims.assumed[key]
	prev := a.claim
	switch {
	case assumed && differentClaims(prev, claim):
		return reject(fmt.Errorf("%w: claim %s is assumed with UID %s, this one has %s", store.ErrUIDMismatch, key, prev.UID, claim.UID))
	case assumed && older(claim.ResourceVersion, prev.ResourceVersion):
		return reject(fmt.Errorf("%w: claim %s is assumed at version %s, this one is %s: assume the newer claim", store.ErrClaimOutOfSync, key, prev.ResourceVersion, claim.ResourceVersion))
	case assumed:
	case seen && differentClaims(api, claim):
		return reject(fmt.Errorf("%w: the API's claim %s has UID %s, this one %s", store.ErrUIDMismatch, key, api.UID, claim.UID))
	case seen && api.Status.Allocation != nil && !older(api.ResourceVersion, claim.ResourceVersion):
		if equality.Semantic.DeepEqual(api.Status.Allocation, claim.Status.Allocation) {
			h.accept(stores.KindResourceClaim, stores.OpAssume) // the API shows it: counted already
			return nil
		}
		return reject(fmt.Errorf("%w: the API shows claim %s allocated otherwise at version %s (this one is %s)", store.ErrClaimAllocated, key, api.ResourceVersion, claim.ResourceVersion))
	case seen && older(claim.ResourceVersion, api.ResourceVersion):
		return reject(fmt.Errorf("%w: the cache holds claim %s at version %s, this one is %s: read the claim again", store.ErrClaimOutOfSync, key, api.ResourceVersion, claim.ResourceVersion))
	}
	for _, check := range h.claims.checks {
		if err := check(claim); err != nil {
			return reject(err)
		}
	}
	var charged *resourcev1.ResourceClaim
	switch {
	case assumed:
		charged = prev
	case seen:
		charged = api
	}
	timed := h.sample()
	fanOut(h.claimKind.subs, stores.OpAssume, charged, claim, timed)
	written := a.written || !seen || knownNewer(claim.ResourceVersion, api.ResourceVersion)
	h.claims.assumed[key] = assumedClaim{claim: claim, written: written}
	h.accept(stores.KindResourceClaim, stores.OpAssume)
	return nil
}

// ForgetClaim ends an assumption (the scheduler's status update failed, or it gave the
// allocation up): the stores are charged with the API's claim again, or with nothing when
// the API has not shown the claim. A claim not assumed is refused (ErrClaimNotAssumed).
func (h *Handler) ForgetClaim(claim *resourcev1.ResourceClaim) error {
	if claim == nil {
		return h.rejectUnlocked(stores.KindResourceClaim, stores.OpForget, "<nil>", fmt.Errorf("%w: nil claim", store.ErrInvalidObject))
	}
	key := keyOf(claim)
	h.mu.Lock()
	defer h.mu.Unlock()
	a, assumed := h.claims.assumed[key]
	prev := a.claim
	if !assumed {
		return h.reject(stores.KindResourceClaim, stores.OpForget, key.String(),
			fmt.Errorf("%w: %s (never assumed, confirmed by the API, deleted or forgotten already)", store.ErrClaimNotAssumed, key))
	}
	delete(h.claims.assumed, key)
	if api, seen := h.claimKind.get(key); seen {
		fanOut(h.claimKind.subs, stores.OpUpdate, prev, api, h.sample())
	} else {
		fanOut(h.claimKind.subs, stores.OpDelete, prev, nil, h.sample())
	}
	h.accept(stores.KindResourceClaim, stores.OpForget)
	return nil
}

// IsAssumedClaim reports whether a claim's allocation is assumed and the API does not show
// it yet.
func (h *Handler) IsAssumedClaim(claim *resourcev1.ResourceClaim) (bool, error) {
	if claim == nil {
		return false, fmt.Errorf("%w: nil claim", store.ErrInvalidObject)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.claims.assumed[keyOf(claim)]
	return ok, nil
}

// dispatchClaim fans an accepted event of the API's claims out (objectKind.dispatch): as
// is when the claim is not assumed, else as the table above says.
func (h *Handler) dispatchClaim(op stores.Op, key types.NamespacedName, charged, claim *resourcev1.ResourceClaim, timed bool) {
	a, assumed := h.claims.assumed[key]
	prev := a.claim
	switch {
	case !assumed:
		fanOut(h.claimKind.subs, op, charged, claim, timed)
	case op == stores.OpDelete:
		delete(h.claims.assumed, key)
		fanOut(h.claimKind.subs, stores.OpDelete, prev, nil, timed)
	case differentClaims(prev, claim) || (claim.Status.Allocation != nil && !older(claim.ResourceVersion, prev.ResourceVersion)) ||
		(a.written && knownNewer(claim.ResourceVersion, prev.ResourceVersion)):
		delete(h.claims.assumed, key)
		fanOut(h.claimKind.subs, stores.OpUpdate, prev, claim, timed)
		h.log.V(2).Info("assumed claim ended by the API's", "claim", key, "assumedVersion", prev.ResourceVersion, "version", claim.ResourceVersion)
	}
}

// assumedClaim is one assumption: the claim, and whether it counts as written: newer than
// the API's claim the cache held when it was assumed (the claim a status update returned,
// kube-scheduler's AssumeClaimAfterAPICall), or of a claim the cache has not seen (it cannot tell; a version it sees later that is newer is
// the API's truth: one that skipped the allocated version must not leave the assumption
// standing for good). Then any newer version is the API's truth, allocated or not, as in
// kube-scheduler's assume cache. Any other assumption (the claim as read,
// SignalClaimPendingAllocation) stands through newer versions until one shows an
// allocation, as kube-scheduler's in-flight allocations do.
type assumedClaim struct {
	claim   *resourcev1.ResourceClaim
	written bool
}

// knownNewer reports whether resource version a is known to be newer than b.
func knownNewer(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// differentClaims reports whether two claims are known to be different objects.
func differentClaims(a, b *resourcev1.ResourceClaim) bool {
	return a.UID != "" && b.UID != "" && a.UID != b.UID
}

// claimMarker is a store that marks the claims whose charge is an assumption (the devices
// store), keyed namespace/name.
type claimMarker interface {
	AssumedClaims() map[string][]string
}

// checkAssumedClaimsLocked checks that every store marking assumed claims marks exactly the
// handler's assumptions. The caller holds the lock.
func (h *Handler) checkAssumedClaimsLocked() []error {
	var errs []error
	for _, s := range h.stores {
		m, ok := s.(claimMarker)
		if !ok {
			continue
		}
		marked := m.AssumedClaims()
		for key := range h.claims.assumed {
			if _, ok := marked[key.String()]; !ok {
				errs = append(errs, fmt.Errorf("claim %s is assumed, but the %s store does not mark it", key, s.Name()))
			}
			delete(marked, key.String())
		}
		for key := range marked {
			errs = append(errs, fmt.Errorf("the %s store marks claim %s assumed, but no scheduler's assumption stands", s.Name(), key))
		}
	}
	return errs
}
