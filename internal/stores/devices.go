package stores

// DeviceStoreName is the store of DRA devices (resource.k8s.io/v1): what every node's
// resource pools publish, what claims hold and what is free, by DeviceClass.
const DeviceStoreName Name = "devices"

// The kinds of Dynamic Resource Allocation (resource.k8s.io/v1).
const (
	KindResourceSlice Kind = "ResourceSlice"
	KindResourceClaim Kind = "ResourceClaim"
	KindDeviceClass   Kind = "DeviceClass"
)
