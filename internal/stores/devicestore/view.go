package devicestore

import (
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// nodeEntry is what the pools give one node.
type nodeEntry struct {
	pools map[poolKey]*reach
}

// Counts are devices published, allocated (held by some claim, alone or by share) and
// free (published and not allocated). Free is never negative: only published devices are
// counted as allocated. Assumed are the allocated devices some claim holds by a
// scheduler's assumption the API does not show yet (counted in Allocated too).
type Counts struct {
	Total     int `json:"total"`
	Allocated int `json:"allocated"`
	Free      int `json:"free"`
	Assumed   int `json:"assumed,omitempty"`
}

func (c *Counts) add(allocated, assumed bool) { c.apply(allocated, assumed, 1) }

// apply adds (sign 1) or takes out (sign -1) one device.
func (c *Counts) apply(allocated, assumed bool, sign int) {
	c.Total += sign
	if allocated {
		c.Allocated += sign
	} else {
		c.Free += sign
	}
	if assumed {
		c.Assumed += sign
	}
}

// PoolDevices are the devices one pool gives a node.
type PoolDevices struct {
	Counts
	Generation int64 `json:"generation"`
	// Shared counts the devices reaching the node other than by its name (node selector,
	// all nodes): the same devices are counted on every node they reach.
	Shared int `json:"shared,omitempty"`
	// Incomplete: the pool's generation lacks some of its slices; Invalid: it names a
	// device twice. kube-scheduler allocates nothing from such a pool: none of its
	// devices is counted.
	Incomplete bool `json:"incomplete,omitempty"`
	Invalid    bool `json:"invalid,omitempty"`
}

// NodeDevices are the DRA devices of one node.
type NodeDevices struct {
	Counts
	// ByClass are the devices each DeviceClass accepts (a device may be in several).
	ByClass map[string]Counts `json:"byClass"`
	// ByPool are the devices of each pool, keyed driver/pool.
	ByPool map[string]PoolDevices `json:"byPool"`
}

// view computes a node's devices.
func (s *Store) view(e *nodeEntry) NodeDevices {
	v := NodeDevices{ByClass: map[string]Counts{}, ByPool: make(map[string]PoolDevices, len(e.pools))}
	for key, r := range e.pools {
		pd := PoolDevices{Generation: r.generation, Incomplete: r.incomplete, Invalid: r.invalid}
		for _, d := range r.devices {
			held, assumed := s.allocated(d.id), s.assumedHolder(d.id)
			v.add(held, assumed)
			pd.add(held, assumed)
			if d.shared {
				pd.Shared++
			}
			for _, c := range d.classes.names {
				cc := v.ByClass[c]
				cc.add(held, assumed)
				v.ByClass[c] = cc
			}
		}
		v.ByPool[key.String()] = pd
	}
	return v
}

// Device is one device as a node sees it.
type Device struct {
	ID DeviceID
	// Shared: the device reaches nodes other than by this one's name.
	Shared bool
	// Allocated: some claim holds it, alone or by share; Assumed: one of them by a
	// scheduler's assumption the API does not show yet.
	Allocated bool
	Assumed   bool
	// Shares is how many shares claims hold (a device allowing multiple allocations), and
	// Consumed the capacity they consume together.
	Shares   int
	Consumed map[resourcev1.QualifiedName]resource.Quantity
	// Classes are the DeviceClasses that accept it, sorted.
	Classes []string
}

// devicesOf lists a node's counted devices.
func (s *Store) devicesOf(e *nodeEntry) []Device {
	var out []Device
	for _, r := range e.pools {
		for _, d := range r.devices {
			dv := Device{ID: d.id, Shared: d.shared, Allocated: s.allocated(d.id), Assumed: s.assumedHolder(d.id), Classes: slices.Clone(d.classes.names)}
			if h := s.holders[d.id]; h != nil && len(h.shares) > 0 {
				dv.Shares = len(h.shares)
				dv.Consumed = make(map[resourcev1.QualifiedName]resource.Quantity, len(h.consumed))
				for name, q := range h.consumed {
					dv.Consumed[name] = q.DeepCopy()
				}
			}
			out = append(out, dv)
		}
	}
	slices.SortFunc(out, func(a, b Device) int { return compareIDs(a.ID, b.ID) })
	return out
}

func compareIDs(a, b DeviceID) int {
	if c := strings.Compare(a.Driver.String(), b.Driver.String()); c != 0 {
		return c
	}
	if c := strings.Compare(a.Pool.String(), b.Pool.String()); c != 0 {
		return c
	}
	return strings.Compare(a.Device.String(), b.Device.String())
}
