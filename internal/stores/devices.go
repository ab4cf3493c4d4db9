package stores

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// DeviceStoreName is the store of DRA devices (resource.k8s.io/v1): what every node's
// resource pools publish, what claims hold and what is free, by DeviceClass.
const DeviceStoreName Name = "devices"

// The kinds of Dynamic Resource Allocation (resource.k8s.io/v1).
const (
	KindResourceSlice Kind = "ResourceSlice"
	KindResourceClaim Kind = "ResourceClaim"
	KindDeviceClass   Kind = "DeviceClass"
)

// ResourceSliceHandler receives ResourceSlice events.
type ResourceSliceHandler interface {
	AddResourceSlice(slice *resourcev1.ResourceSlice)
	UpdateResourceSlice(oldSlice, newSlice *resourcev1.ResourceSlice)
	DeleteResourceSlice(slice *resourcev1.ResourceSlice)
}

// ResourceClaimHandler receives ResourceClaim events.
type ResourceClaimHandler interface {
	AddResourceClaim(claim *resourcev1.ResourceClaim)
	UpdateResourceClaim(oldClaim, newClaim *resourcev1.ResourceClaim)
	DeleteResourceClaim(claim *resourcev1.ResourceClaim)
}

// DeviceClassHandler receives DeviceClass events.
type DeviceClassHandler interface {
	AddDeviceClass(class *resourcev1.DeviceClass)
	UpdateDeviceClass(oldClass, newClass *resourcev1.DeviceClass)
	DeleteDeviceClass(class *resourcev1.DeviceClass)
}
