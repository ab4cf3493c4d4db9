package multicache

import "github.com/seed0f91f25e/multicache/internal/stores/devicestore"

// DeviceCounts counts DRA devices: Total = Allocated + Free; Assumed are the allocated ones
// a scheduler's assumption holds that the API does not show yet.
type DeviceCounts struct {
	Total, Allocated, Free, Assumed int
}

// PoolDevices are the devices of one resource pool on a node.
type PoolDevices struct {
	DeviceCounts
	// Generation is the pool's newest generation, the only one counted.
	Generation int64
	// Shared counts the devices reaching the node other than by its name (a node selector,
	// all nodes): the same devices are counted on every node they reach.
	Shared int
	// Incomplete: the generation lacks some of its slices; Invalid: it names a device twice.
	// kube-scheduler allocates nothing from such a pool, and none of its devices is counted.
	Incomplete, Invalid bool
}

// NodeDevices are the DRA devices of one node.
type NodeDevices struct {
	DeviceCounts
	// ByClass are the devices each DeviceClass accepts (a device may be in several).
	ByClass map[string]DeviceCounts
	// ByPool are the devices of each pool, keyed driver/pool.
	ByPool map[string]PoolDevices
}

func deviceCountsOf(c devicestore.Counts) DeviceCounts {
	return DeviceCounts{Total: c.Total, Allocated: c.Allocated, Free: c.Free, Assumed: c.Assumed}
}

func nodeDevicesOf(v devicestore.NodeDevices) NodeDevices {
	out := NodeDevices{DeviceCounts: deviceCountsOf(v.Counts),
		ByClass: make(map[string]DeviceCounts, len(v.ByClass)), ByPool: make(map[string]PoolDevices, len(v.ByPool))}
	for class, c := range v.ByClass {
		out.ByClass[class] = deviceCountsOf(c)
	}
	for pool, p := range v.ByPool {
		out.ByPool[pool] = PoolDevices{DeviceCounts: deviceCountsOf(p.Counts), Generation: p.Generation, Shared: p.Shared,
			Incomplete: p.Incomplete, Invalid: p.Invalid}
	}
	return out
}
