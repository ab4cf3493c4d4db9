package devicestore

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"
)

// selector is how a slice or a device selects nodes.
type selector struct {
	nodeName string
	allNodes bool
	sel      *nodeaffinity.NodeSelector
}

// matches is structured.NodeMatches with the selector parsed once. A node the cache does
// not know (a name some slice gives) is only reached by name.
func (sel selector) matches(node *corev1.Node, known bool) bool {
	switch {
	case sel.nodeName != "":
		return node.Name == sel.nodeName
	case !known:
		return false
	case sel.allNodes:
		return true
	case sel.sel != nil:
		return sel.sel.Match(node)
	}
	return false
}

// byName reports whether sel reaches one node by its name (not shared).
func (sel selector) byName() bool { return sel.nodeName != "" }

// selectorOf parses a node selection (nodeName, allNodes, nodeSelector) as
// structured.NodeMatches reads it; ok is false when none is set.
func selectorOf(nodeName *string, allNodes *bool, ns *corev1.NodeSelector) (selector, bool, error) {
	switch {
	case ptr.Deref(nodeName, "") != "":
		return selector{nodeName: *nodeName}, true, nil
	case ptr.Deref(allNodes, false):
		return selector{allNodes: true}, true, nil
	case ns != nil:
		sel, err := nodeaffinity.NewNodeSelector(ns)
		if err != nil {
			return selector{}, true, err
		}
		return selector{sel: sel}, true, nil
	}
	return selector{}, false, nil
}

// sliceTargets are a slice's node selection: one for the slice, or one per device with
// perDeviceNodeSelection (devices selecting nothing are left out).
type sliceTargets struct {
	slice     *resourcev1.ResourceSlice
	perDevice bool
	whole     selector
	devices   []selector // by device index, with perDevice
	known     bool       // some node selection is set
}

func (s *Store) targetsOf(p *pool, slice *resourcev1.ResourceSlice) sliceTargets {
	t := sliceTargets{slice: slice}
	whole, ok, err := selectorOf(slice.Spec.NodeName, slice.Spec.AllNodes, slice.Spec.NodeSelector)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("slice %s: node selector: %w", slice.Name, err))
	}
	if ok {
		t.whole, t.known = whole, err == nil
		return t
	}
	if !ptr.Deref(slice.Spec.PerDeviceNodeSelection, false) {
		return t
	}
	t.perDevice, t.known = true, true
	t.devices = make([]selector, len(slice.Spec.Devices))
	for i := range slice.Spec.Devices {
		d := &slice.Spec.Devices[i]
		sel, _, err := selectorOf(d.NodeName, d.AllNodes, d.NodeSelector)
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("slice %s, device %s: node selector: %w", slice.Name, d.Name, err))
		}
		t.devices[i] = sel
	}
	return t
}

// selective reports whether a slice reaches nodes other than by name.
func (t sliceTargets) selective() bool {
	if !t.known {
		return false
	}
	if !t.perDevice {
		return !t.whole.byName()
	}
	return true
}

// namedNodes are the nodes a slice reaches by name (whether known or not).
func (t sliceTargets) namedNodes() []string {
	if !t.perDevice {
		if t.whole.byName() {
			return []string{t.whole.nodeName}
		}
		return nil
	}
	var out []string
	for _, sel := range t.devices {
		if sel.byName() {
			out = append(out, sel.nodeName)
		}
	}
	return out
}

// reaches reports whether a slice reaches a node (some of its devices, per device).
func (t sliceTargets) reaches(node *corev1.Node, known bool) bool {
	if !t.known {
		return false
	}
	if !t.perDevice {
		return t.whole.matches(node, known)
	}
	return slices.ContainsFunc(t.devices, func(sel selector) bool { return sel.matches(node, known) })
}

// deviceReaches reports whether device i of the slice reaches a node.
func (t sliceTargets) deviceReaches(i int, node *corev1.Node, known bool) bool {
	return !t.perDevice || t.devices[i].matches(node, known)
}

// deviceShared reports whether device i reaches nodes other than by name.
func (t sliceTargets) deviceShared(i int) bool {
	if t.perDevice {
		return !t.devices[i].byName()
	}
	return !t.whole.byName()
}

// poolTargets parses the node selections of a pool's slices, sorted by name.
func (s *Store) poolTargets(p *pool) []sliceTargets {
	names := slices.Sorted(maps.Keys(p.slices))
	out := make([]sliceTargets, 0, len(names))
	for _, name := range names {
		out = append(out, s.targetsOf(p, p.slices[name]))
	}
	return out
}
