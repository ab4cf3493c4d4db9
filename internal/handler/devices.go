package handler

import (
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The DRA kinds (resource.k8s.io/v1) go through the same path as every kind other than Pod:
// validated against the last-seen objects, then fanned out to the stores that implement
// store.ResourceSliceHandler, store.ResourceClaimHandler or store.DeviceClassHandler.

// subscribeDevices adds a store to the DRA kinds whose event interfaces it implements.
func (h *Handler) subscribeDevices(s store.Store, after func()) {
	name := s.Name()
	if st, ok := s.(store.ResourceSliceHandler); ok {
		h.sliceKind.subs = append(h.sliceKind.subs, newSubscriber(name, after, st.AddResourceSlice, st.UpdateResourceSlice, st.DeleteResourceSlice))
	}
	if st, ok := s.(store.ResourceClaimHandler); ok {
		sub := newSubscriber(name, after, st.AddResourceClaim, st.UpdateResourceClaim, st.DeleteResourceClaim)
		if a, ok := s.(store.ResourceClaimAssumer); ok {
			sub.assume = then2(a.AssumeResourceClaim, after)
			h.claims.checks = append(h.claims.checks, a.CheckAssumeResourceClaim)
		}
		h.claimKind.subs = append(h.claimKind.subs, sub)
	}
	if st, ok := s.(store.DeviceClassHandler); ok {
		h.classKind.subs = append(h.classKind.subs, newSubscriber(name, after, st.AddDeviceClass, st.UpdateDeviceClass, st.DeleteDeviceClass))
	}
}
