package devicestore

import "github.com/seed0f91f25e/multicache/pkg/multicache/store"

// CountAll counts the cluster's devices from the pools, as ClusterCounts did before it kept
// running totals: what the totals are compared with.
func (s *Store) CountAll() (store.DeviceCounts, map[string]store.DeviceCounts) {
	fresh := s.countAll(false)
	byClass := make(map[string]store.DeviceCounts, len(s.classes))
	for name := range s.classes {
		byClass[name] = fresh.of(name)
	}
	return fresh.all, byClass
}

// MiscountForTest puts one device too many in the kept totals, for the self-check's test.
func (s *Store) MiscountForTest() { s.totals.all.Total++ }

// MissRecountForTest takes the holders of device driver/pool/name out of its share and of
// the kept totals, as a recount the store failed to make when a claim took it would.
func (s *Store) MissRecountForTest(driver, pool, name string) {
	p := s.pools[poolKey{driver, pool}]
	for id, e := range p.devices {
		if id.Device.String() == name {
			stale := e.share
			stale.held, stale.assumed = false, false
			s.totals.apply(e.share, -1)
			s.totals.apply(stale, 1)
			e.share = stale
		}
	}
}
