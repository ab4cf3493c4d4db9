package devicestore

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// allocation is one counted result of a claim's allocation.
type allocation struct {
	id DeviceID
	// shareID is set for one share of a device allowing multiple allocations.
	shareID  string
	consumed map[resourcev1.QualifiedName]resource.Quantity
}

// allocationsOf reads a claim's allocation as kube-scheduler's claim tracker does (its
// foreachAllocatedDevice with consumable capacity on): results with admin access are not
// counted; a result with a shareID is one share, any other holds its device alone.
func allocationsOf(claim *resourcev1.ResourceClaim) []allocation {
	if claim.Status.Allocation == nil {
		return nil
	}
	var out []allocation
	for _, r := range claim.Status.Allocation.Devices.Results {
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		a := allocation{id: structured.MakeDeviceID(r.Driver, r.Pool, r.Device)}
		if r.ShareID != nil {
			a.shareID, a.consumed = string(*r.ShareID), r.ConsumedCapacity
		}
		out = append(out, a)
	}
	return out
}

// holders are the claims holding one device: alone (dedicated; more than one is a
// violation) or by share, with the capacity the shares consume. The store keeps none
// empty: release drops the last.
type holders struct {
	dedicated []types.NamespacedName
	shares    map[string]types.NamespacedName
	consumed  structured.ConsumedCapacity
}

func (s *Store) hold(claim types.NamespacedName, a allocation) {
	h := s.holders[a.id]
	if h == nil {
		h = &holders{}
		s.holders[a.id] = h
	}
	if a.shareID == "" {
		h.dedicated = append(h.dedicated, claim)
	} else {
		if h.shares == nil { // most devices are held alone: no maps for them
			h.shares, h.consumed = map[string]types.NamespacedName{}, structured.ConsumedCapacity{}
		}
		h.shares[a.shareID] = claim
		if a.consumed != nil {
			h.consumed.Add(structured.NewDeviceConsumedCapacity(a.id, a.consumed).ConsumedCapacity)
		}
	}
	s.touchDevice(a.id)
}

func (s *Store) release(claim types.NamespacedName, a allocation) {
	h := s.holders[a.id]
	if h == nil {
		return
	}
	if a.shareID == "" {
		for i, c := range h.dedicated {
			if c == claim {
				h.dedicated = append(h.dedicated[:i], h.dedicated[i+1:]...)
				break
			}
		}
	} else if h.shares[a.shareID] == claim {
		delete(h.shares, a.shareID)
		if a.consumed != nil {
			h.consumed.Sub(structured.NewDeviceConsumedCapacity(a.id, a.consumed).ConsumedCapacity)
		}
	}
	if len(h.dedicated) == 0 && len(h.shares) == 0 {
		delete(s.holders, a.id)
	}
	s.touchDevice(a.id)
}

// touchDevice marks changed the nodes a device is published to, and recounts it in the
// cluster's totals: its holders or their assumptions changed.
func (s *Store) touchDevice(id DeviceID) {
	p, e := s.deviceOf(id)
	if e == nil {
		return
	}
	for _, v := range e.versions {
		for node := range v.nodes.all {
			s.views.Touch(node)
		}
	}
	s.recount(p, id)
}

// deviceOf returns a device's pool and entry; a nil entry when no pool publishes it.
func (s *Store) deviceOf(id DeviceID) (*pool, *device) {
	p := s.pools[poolKey{id.Driver.String(), id.Pool.String()}]
	if p == nil {
		return nil, nil
	}
	return p, p.devices[id]
}

// allocated reports whether a device is held, alone or by some share.
func (s *Store) allocated(id DeviceID) bool {
	return s.holders[id] != nil
}
