package stores

import "github.com/seed0f91f25e/multicache/pkg/multicache/store"

// DeviceStoreName is the store of DRA devices (resource.k8s.io/v1): what every node's
// resource pools publish, what claims hold and what is free, by DeviceClass.
const DeviceStoreName Name = "devices"

// The kinds of Dynamic Resource Allocation (resource.k8s.io/v1).
const (
	KindResourceSlice Kind = "ResourceSlice"
	KindResourceClaim Kind = "ResourceClaim"
	KindDeviceClass   Kind = "DeviceClass"
)

// The DRA event interfaces are the public contract's (pkg/multicache/store), so that a store
// written out of tree can count devices too.
type (
	ResourceSliceHandler = store.ResourceSliceHandler
	ResourceClaimHandler = store.ResourceClaimHandler
	DeviceClassHandler   = store.DeviceClassHandler
	ResourceClaimAssumer = store.ResourceClaimAssumer
)
