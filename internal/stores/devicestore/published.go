package devicestore

import (
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// device is one device ID a pool publishes to some node: usually one object of the API's,
// more when the pool names the device in several slices reaching different nodes (a node
// counts the newest generation reaching it, another node an older one; slices of one
// generation each reaching its own nodes), and while an updated slice replaces its devices.
type device struct {
	versions []*published
	// share is what the device adds to the cluster's totals (totals.go).
	share share
}

// published is one version of a device: one device of one of the pool's slices.
type published struct {
	id     DeviceID
	device *resourcev1.Device
	// shared: the device reaches nodes other than by name (node selector, all nodes).
	shared bool
	// classes are the DeviceClasses whose selectors accept the device.
	classes *classSet
	// nodes are the nodes the version is counted on.
	nodes nodeSet
}

// publish returns the pool's entry for a device of one of its slices, matched against the
// classes once per version of the device: a version whose selector input (attributes,
// capacity, multiple allocations) equals another's (an update of its slice, the next
// generation) takes its classes without evaluating the selectors again.
func (s *Store) publish(p *pool, d *resourcev1.Device, shared bool) *published {
	id := structured.MakeDeviceID(p.key.driver, p.key.pool, d.Name)
	e := p.devices[id]
	if e == nil {
		e = &device{}
		p.devices[id] = e
	}
	for _, v := range e.versions {
		if v.device == d {
			v.shared = v.shared || shared
			return v
		}
	}
	pd := &published{id: id, device: d, shared: shared}
	for _, v := range e.versions {
		if sameSelectorInput(v.device, d) {
			pd.classes = v.classes
			break
		}
	}
	if pd.classes == nil {
		pd.classes = s.classSets.empty
		for _, c := range s.classes {
			if s.matches(c, pd) {
				pd.classes = s.classSets.with(pd.classes, c.class.Name, true)
			}
		}
	}
	e.versions = append(e.versions, pd)
	return pd
}

// sameSelectorInput reports whether two versions of a device give a class's CEL selectors
// the same input (cel.Device: the driver is the pool's), field by field
// (TestSameSelectorInput_ComparesEveryField fails when the API adds one): a reflective
// comparison cost as much as the evaluation it saves.
func sameSelectorInput(a, b *resourcev1.Device) bool {
	if ptr.Deref(a.AllowMultipleAllocations, false) != ptr.Deref(b.AllowMultipleAllocations, false) ||
		len(a.Attributes) != len(b.Attributes) || len(a.Capacity) != len(b.Capacity) {
		return false
	}
	for name, x := range a.Attributes {
		y, ok := b.Attributes[name]
		if !ok || !sameAttribute(x, y) {
			return false
		}
	}
	for name, x := range a.Capacity {
		y, ok := b.Capacity[name]
		if !ok || x.Value.Cmp(y.Value) != 0 || x.Value.Format != y.Value.Format {
			return false
		}
	}
	return true
}

func sameAttribute(a, b resourcev1.DeviceAttribute) bool {
	return samePtr(a.IntValue, b.IntValue) && samePtr(a.BoolValue, b.BoolValue) &&
		samePtr(a.StringValue, b.StringValue) && samePtr(a.VersionValue, b.VersionValue) &&
		sameList(a.IntValues, b.IntValues) && sameList(a.BoolValues, b.BoolValues) &&
		sameList(a.StringValues, b.StringValues) && sameList(a.VersionValues, b.VersionValues)
}

// samePtr: both unset, or both set to equal values.
func samePtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameList: both unset, or both set to equal lists (the evaluator tells a set empty list
// from an unset one).
func sameList[T comparable](a, b []T) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// dropUnreached forgets the versions the pool no longer publishes to any node, and the
// devices left with none.
func (s *Store) dropUnreached(p *pool) {
	for id, e := range p.devices {
		e.versions = slices.DeleteFunc(e.versions, func(v *published) bool { return v.nodes.len() == 0 })
		if len(e.versions) == 0 {
			s.uncount(e)
			delete(p.devices, id)
		}
	}
}
