package devicestore

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// namedDevices returns, per pool, the device names its slices of any generation use:
// built once per check, for the pools some claim holds a device of.
type namedDevices map[poolKey]map[string]bool

func (n namedDevices) has(s *Store, id DeviceID) bool {
	key := poolKey{id.Driver.String(), id.Pool.String()}
	names, ok := n[key]
	if !ok {
		names = map[string]bool{}
		if p := s.pools[key]; p != nil {
			for _, slice := range p.slices {
				for i := range slice.Spec.Devices {
					names[slice.Spec.Devices[i].Name] = true
				}
			}
		}
		n[key] = names
	}
	return names[id.Device.String()]
}

// claimNames names the claims holding a device, marking shares and assumptions.
func (s *Store) claimNames(h *holders) []string {
	var out []string
	for _, c := range h.dedicated {
		out = append(out, c.String()+s.assumedMark(c))
	}
	for _, c := range h.shares {
		out = append(out, c.String()+" (shared)"+s.assumedMark(c))
	}
	slices.Sort(out)
	return out
}

// CheckInvariants implements stores.Store: every device a claim holds is named by some
// slice; no device is held alone by two claims, or alone by one and shared by another;
// every slice naming a node names a known one; the node views agree with the pools; and
// the cluster's totals agree with a count of the devices.
func (s *Store) CheckInvariants() []error {
	var errs []error
	named := namedDevices{}
	for id, h := range s.holders {
		if !named.has(s, id) {
			errs = append(errs, fmt.Errorf("claims %s hold device %s, which no ResourceSlice publishes", strings.Join(s.claimNames(h), ", "), id))
		}
		if len(h.dedicated) > 1 || (len(h.dedicated) == 1 && len(h.shares) > 0) {
			errs = append(errs, fmt.Errorf("device %s is held by claims %s: a device not shared is held by one claim at most", id, strings.Join(s.claimNames(h), ", ")))
		}
	}
	for name, slice := range s.slices {
		if n := slice.Spec.NodeName; n != nil && *n != "" {
			if _, ok := s.nodes[*n]; !ok {
				errs = append(errs, fmt.Errorf("ResourceSlice %s is for node %s, which the cache does not know", name, *n))
			}
		}
		for i := range slice.Spec.Devices {
			if n := slice.Spec.Devices[i].NodeName; n != nil && *n != "" {
				if _, ok := s.nodes[*n]; !ok {
					errs = append(errs, fmt.Errorf("ResourceSlice %s, device %s is for node %s, which the cache does not know", name, slice.Spec.Devices[i].Name, *n))
				}
			}
		}
	}
	s.views.Range(func(node string, e nodeEntry) bool {
		for key, r := range e {
			p := s.pools[key]
			if p == nil || p.reach[node] != r {
				errs = append(errs, fmt.Errorf("node %s counts pool %s, which does not reach it", node, key))
				continue
			}
			for _, d := range r.devices {
				if e := p.devices[d.id]; !d.nodes.has(node) || e == nil || !slices.Contains(e.versions, d) {
					errs = append(errs, fmt.Errorf("node %s counts device %s, which its pool does not publish to it", node, d.id))
				}
			}
		}
		return true
	})
	for key, p := range s.pools {
		for node, r := range p.reach {
			if e, ok := s.views.Get(node); !ok || e[key] != r {
				errs = append(errs, fmt.Errorf("pool %s reaches node %s, whose view misses it", key, node))
			}
		}
	}
	errs = append(errs, s.checkTotals()...)
	return append(errs, s.checkExtendedClaims()...)
}

// checkTotals compares the cluster's totals, kept as events change them, with a count of
// the devices, and marks them miscounted when they differ (RebuildTotals).
func (s *Store) checkTotals() (errs []error) {
	defer func() { s.miscounted.Store(len(errs) > 0) }()
	fresh := s.countAll(false)
	if s.totals.all != fresh.all {
		errs = append(errs, fmt.Errorf("the cluster's device totals (multicache_devices) are %+v, a count of the devices gives %+v", s.totals.all, fresh.all))
	}
	for _, name := range slices.Sorted(maps.Keys(s.classes)) {
		if kept, want := s.totals.of(name), fresh.of(name); kept != want {
			errs = append(errs, fmt.Errorf("the device totals of DeviceClass %s (multicache_devices) are %+v, a count of the devices gives %+v", name, kept, want))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.totals.byClass)) {
		if _, known := s.classes[name]; !known && *s.totals.byClass[name] != (store.DeviceCounts{}) {
			errs = append(errs, fmt.Errorf("the device totals count %+v for DeviceClass %s, which the cache does not know", *s.totals.byClass[name], name))
		}
	}
	return errs
}
