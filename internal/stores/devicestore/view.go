package devicestore

import (
	"cmp"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// nodeEntry is what the pools give one node.
type nodeEntry map[poolKey]*reach

// count adds (sign 1) or takes out (sign -1) one device.
func count(c *store.DeviceCounts, allocated, assumed bool, sign int) {
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

// view computes a node's devices.
func (s *Store) view(e nodeEntry) store.NodeDevices {
	v := store.NodeDevices{ByClass: map[string]store.DeviceCounts{}, ByPool: make(map[string]store.PoolDevices, len(e))}
	for key, r := range e {
		pd := store.PoolDevices{Generation: r.generation, Incomplete: r.incomplete, Invalid: r.invalid}
		for _, d := range r.devices {
			held, assumed := s.allocated(d.id), s.assumedHolder(d.id)
			count(&v.DeviceCounts, held, assumed, 1)
			count(&pd.DeviceCounts, held, assumed, 1)
			if d.shared {
				pd.Shared++
			}
			for _, c := range d.classes.names {
				cc := v.ByClass[c]
				count(&cc, held, assumed, 1)
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
func (s *Store) devicesOf(e nodeEntry) []Device {
	var out []Device
	for _, r := range e {
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
	slices.SortFunc(out, func(a, b Device) int {
		return cmp.Or(strings.Compare(a.ID.Driver.String(), b.ID.Driver.String()),
			strings.Compare(a.ID.Pool.String(), b.ID.Pool.String()), strings.Compare(a.ID.Device.String(), b.ID.Device.String()))
	})
	return out
}
