package devicestore

import (
	"k8s.io/apimachinery/pkg/util/sets"
)

// Node returns the devices of a node; false when no pool reaches it.
func (s *Store) Node(name string) (NodeDevices, bool) {
	e, ok := s.views.Get(name)
	if !ok {
		return NodeDevices{}, false
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

// Nodes returns the names of the nodes some pool reaches.
func (s *Store) Nodes() []string {
	var out []string
	s.views.Range(func(name string, _ *nodeEntry) bool {
		out = append(out, name)
		return true
	})
	return out
}

// AllocatedDevices returns every device some claim holds, published or not: the set
// kube-scheduler's claim tracker gathers (its AllocatedDevices plus the devices of its
// shared device IDs).
func (s *Store) AllocatedDevices() sets.Set[DeviceID] {
	out := sets.New[DeviceID]()
	for id, h := range s.holders {
		if !h.empty() {
			out.Insert(id)
		}
	}
	return out
}
