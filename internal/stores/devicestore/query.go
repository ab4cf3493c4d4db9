package devicestore

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Node returns the devices of a node; false when no pool reaches it.
func (s *Store) Node(name string) (store.NodeDevices, bool) {
	e, ok := s.views.Get(name)
	if !ok {
		return store.NodeDevices{}, false
	}
	return s.view(e), true
}

// NodeDevicesList lists the counted devices of a node, sorted by ID.
func (s *Store) NodeDevicesList(name string) []Device {
	e, ok := s.views.Get(name)
	if !ok {
		return nil
	}
	return s.devicesOf(e)
}

// AllocatedDevices returns every device some claim holds, published or not: the set
// kube-scheduler's claim tracker gathers (its AllocatedDevices plus the devices of its
// shared device IDs).
func (s *Store) AllocatedDevices() sets.Set[DeviceID] {
	return sets.KeySet(s.holders)
}

// ConsumedCapacity returns, per device some claims share, the capacity the shares consume
// together (kube-scheduler's AggregatedCapacity); devices consuming nothing are left out.
func (s *Store) ConsumedCapacity() map[DeviceID]map[resourcev1.QualifiedName]resource.Quantity {
	out := map[DeviceID]map[resourcev1.QualifiedName]resource.Quantity{}
	for id, h := range s.holders {
		if h.consumed.Empty() {
			continue
		}
		c := make(map[resourcev1.QualifiedName]resource.Quantity, len(h.consumed))
		for name, q := range h.consumed {
			c[name] = q.DeepCopy()
		}
		out[id] = c
	}
	return out
}

// ClusterCounts returns the devices of the whole cluster, each counted once however many
// nodes it reaches (a node view counts a shared device on every node it reaches): all of
// them, and those each known DeviceClass accepts (zero for a class that accepts none; a
// device may be in several classes, so the classes do not add up to all). A device counts
// when its pool publishes it to some node, as in the node views. The counts are kept as
// events change them (totals.go): a call costs one map entry per class, not a count of the
// devices.
func (s *Store) ClusterCounts() (all store.DeviceCounts, byClass map[string]store.DeviceCounts) {
	byClass = make(map[string]store.DeviceCounts, len(s.classes))
	for name := range s.classes {
		byClass[name] = s.totals.of(name)
	}
	return s.totals.all, byClass
}
