package zonestore

import (
	"sort"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is the store's part of a cache snapshot: read it without any lock.
type Snapshot struct {
	zones  map[string]ZoneView
	owners map[store.OwnerKey]bool
}

// ZoneView is one zone: its pods, and the pods of each workload there.
type ZoneView struct {
	Pods    int
	ByOwner map[store.OwnerKey]int
}

// StoreName implements store.Snapshot.
func (s *Snapshot) StoreName() store.Name { return Name }

// Zones returns the pods of every zone (NoZone: pods whose node has no zone).
func (s *Snapshot) Zones() map[string]int {
	out := make(map[string]int, len(s.zones))
	for name, z := range s.zones {
		out[name] = z.Pods
	}
	return out
}

// Spread returns, for every workload seen, how many of its pods run in each zone.
func (s *Snapshot) Spread() map[store.OwnerKey]map[string]int {
	out := map[store.OwnerKey]map[string]int{}
	for name, z := range s.zones {
		for owner, n := range z.ByOwner {
			if !s.owners[owner] {
				continue
			}
			if out[owner] == nil {
				out[owner] = map[string]int{}
			}
			out[owner][name] += n
		}
	}
	return out
}

// SingleZone returns the workloads with at least two pods, all in one zone, sorted.
func (s *Snapshot) SingleZone() []store.OwnerKey {
	var out []store.OwnerKey
	for owner, zones := range s.Spread() {
		for z, n := range zones {
			if len(zones) == 1 && n >= 2 && z != NoZone {
				out = append(out, owner)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Type < b.Type
	})
	return out
}

// NewSnapshot implements store.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return &Snapshot{zones: map[string]ZoneView{}, owners: map[store.OwnerKey]bool{}}
}

// UpdateSnapshot implements store.Store: only the zones and owners changed after since
// are copied.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	zs := snap.(*Snapshot)
	store.Sync(s.zones, zs.zones, since, func(_ ZoneView, z *zone) ZoneView {
		v := ZoneView{Pods: len(z.pods), ByOwner: map[store.OwnerKey]int{}}
		for _, owner := range z.pods {
			if owner != (store.OwnerKey{}) {
				v.ByOwner[owner]++
			}
		}
		return v
	}, nil)
	store.Sync(s.owners, zs.owners, since, func(bool, *store.Owner) bool { return true }, nil)
}
