package handler

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The DRA kinds (resource.k8s.io/v1) go through the same path as every kind other than Pod:
// validated against the last-seen objects, then fanned out to the stores that implement
// stores.ResourceSliceHandler, stores.ResourceClaimHandler or stores.DeviceClassHandler.

// DeviceEventsHandler is the edge form of the DRA kinds, as ClusterEventsHandler's
// Add/Update/Delete are of the others (an update is previous-cached and current object, a
// delete carries the last-seen object); the feeds call the level form, Sync.
type DeviceEventsHandler interface {
	AddResourceSlice(slice *resourcev1.ResourceSlice) error
	UpdateResourceSlice(oldSlice, newSlice *resourcev1.ResourceSlice) error
	DeleteResourceSlice(slice *resourcev1.ResourceSlice) error
	AddResourceClaim(claim *resourcev1.ResourceClaim) error
	UpdateResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim) error
	DeleteResourceClaim(claim *resourcev1.ResourceClaim) error
	AddDeviceClass(class *resourcev1.DeviceClass) error
	UpdateDeviceClass(oldClass, newClass *resourcev1.DeviceClass) error
	DeleteDeviceClass(class *resourcev1.DeviceClass) error
}

var _ DeviceEventsHandler = (*Handler)(nil)

// subscribeDevices adds a store to the DRA kinds whose event interfaces it implements.
func (h *Handler) subscribeDevices(s store.Store, after func()) {
	name := s.Name()
	if st, ok := s.(stores.ResourceSliceHandler); ok {
		h.sliceKind.subs = append(h.sliceKind.subs, newSubscriber(name, after, st.AddResourceSlice, st.UpdateResourceSlice, st.DeleteResourceSlice))
	}
	if st, ok := s.(stores.ResourceClaimHandler); ok {
		sub := newSubscriber(name, after, st.AddResourceClaim, st.UpdateResourceClaim, st.DeleteResourceClaim)
		if a, ok := s.(stores.ResourceClaimAssumer); ok {
			sub.assume = then2(a.AssumeResourceClaim, after)
			h.claims.checks = append(h.claims.checks, a.CheckAssumeResourceClaim)
		}
		h.claimKind.subs = append(h.claimKind.subs, sub)
	}
	if st, ok := s.(stores.DeviceClassHandler); ok {
		h.classKind.subs = append(h.classKind.subs, newSubscriber(name, after, st.AddDeviceClass, st.UpdateDeviceClass, st.DeleteDeviceClass))
	}
}

// watchedDeviceKinds returns the DRA kinds some enabled store handles.
func (h *Handler) watchedDeviceKinds() []stores.Kind {
	var kinds []stores.Kind
	if len(h.sliceKind.subs) > 0 {
		kinds = append(kinds, stores.KindResourceSlice)
	}
	if len(h.claimKind.subs) > 0 {
		kinds = append(kinds, stores.KindResourceClaim)
	}
	if len(h.classKind.subs) > 0 {
		kinds = append(kinds, stores.KindDeviceClass)
	}
	return kinds
}

// AddResourceSlice applies a ResourceSlice add.
func (h *Handler) AddResourceSlice(slice *resourcev1.ResourceSlice) error {
	return objectEvent(h, h.sliceKind, stores.OpAdd, nil, slice)
}

// UpdateResourceSlice applies a ResourceSlice update (previous-cached and current object).
func (h *Handler) UpdateResourceSlice(oldSlice, newSlice *resourcev1.ResourceSlice) error {
	return objectEvent(h, h.sliceKind, stores.OpUpdate, oldSlice, newSlice)
}

// DeleteResourceSlice applies a ResourceSlice delete (the last-seen object).
func (h *Handler) DeleteResourceSlice(slice *resourcev1.ResourceSlice) error {
	return objectEvent(h, h.sliceKind, stores.OpDelete, slice, nil)
}

// AddResourceClaim applies a ResourceClaim add.
func (h *Handler) AddResourceClaim(claim *resourcev1.ResourceClaim) error {
	return objectEvent(h, h.claimKind, stores.OpAdd, nil, claim)
}

// UpdateResourceClaim applies a ResourceClaim update (previous-cached and current object).
func (h *Handler) UpdateResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim) error {
	return objectEvent(h, h.claimKind, stores.OpUpdate, oldClaim, newClaim)
}

// DeleteResourceClaim applies a ResourceClaim delete (the last-seen object).
func (h *Handler) DeleteResourceClaim(claim *resourcev1.ResourceClaim) error {
	return objectEvent(h, h.claimKind, stores.OpDelete, claim, nil)
}

// AddDeviceClass applies a DeviceClass add.
func (h *Handler) AddDeviceClass(class *resourcev1.DeviceClass) error {
	return objectEvent(h, h.classKind, stores.OpAdd, nil, class)
}

// UpdateDeviceClass applies a DeviceClass update (previous-cached and current object).
func (h *Handler) UpdateDeviceClass(oldClass, newClass *resourcev1.DeviceClass) error {
	return objectEvent(h, h.classKind, stores.OpUpdate, oldClass, newClass)
}

// DeleteDeviceClass applies a DeviceClass delete (the last-seen object).
func (h *Handler) DeleteDeviceClass(class *resourcev1.DeviceClass) error {
	return objectEvent(h, h.classKind, stores.OpDelete, class, nil)
}

// LastSeenResourceSlice returns the ResourceSlice the stores are charged with.
func (h *Handler) LastSeenResourceSlice(name string) (*resourcev1.ResourceSlice, bool) {
	return lastSeen(h, h.sliceKind, name)
}

// LastSeenResourceClaim returns the ResourceClaim the stores are charged with.
func (h *Handler) LastSeenResourceClaim(key types.NamespacedName) (*resourcev1.ResourceClaim, bool) {
	return lastSeen(h, h.claimKind, key)
}

// LastSeenDeviceClass returns the DeviceClass the stores are charged with.
func (h *Handler) LastSeenDeviceClass(name string) (*resourcev1.DeviceClass, bool) {
	return lastSeen(h, h.classKind, name)
}
