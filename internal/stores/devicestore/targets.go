package devicestore

import (
	"fmt"
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

// sliceTargets are a slice's node selection: one selector for the slice, or one per
// device by index with perDevice; none when the slice selects no node (nothing set, or a
// selector that does not parse).
type sliceTargets struct {
	slice     *resourcev1.ResourceSlice
	sels      []selector
	perDevice bool
}

func (s *Store) targetsOf(p *pool, slice *resourcev1.ResourceSlice) sliceTargets {
	t := sliceTargets{slice: slice}
	sel, ok, err := selectorOf(slice.Spec.NodeName, slice.Spec.AllNodes, slice.Spec.NodeSelector)
	switch {
	case err != nil:
		p.errs = append(p.errs, fmt.Errorf("slice %s: node selector: %w", slice.Name, err))
	case ok:
		t.sels = []selector{sel}
	case ptr.Deref(slice.Spec.PerDeviceNodeSelection, false):
		t.perDevice = true
		t.sels = make([]selector, len(slice.Spec.Devices))
		for i := range slice.Spec.Devices {
			d := &slice.Spec.Devices[i]
			sel, _, err := selectorOf(d.NodeName, d.AllNodes, d.NodeSelector)
			if err != nil {
				p.errs = append(p.errs, fmt.Errorf("slice %s, device %s: node selector: %w", slice.Name, d.Name, err))
			}
			t.sels[i] = sel
		}
	}
	return t
}

// selective reports whether a slice reaches nodes other than by name: only those follow
// the nodes' labels and the nodes the cache knows.
func (t sliceTargets) selective() bool {
	return slices.ContainsFunc(t.sels, func(sel selector) bool { return sel.allNodes || sel.sel != nil })
}

// namedNodes are the nodes a slice reaches by name (whether known or not).
func (t sliceTargets) namedNodes() []string {
	var out []string
	for _, sel := range t.sels {
		if sel.nodeName != "" {
			out = append(out, sel.nodeName)
		}
	}
	return out
}

// reaches reports whether a slice reaches a node (some of its devices, per device).
func (t sliceTargets) reaches(node *corev1.Node, known bool) bool {
	return slices.ContainsFunc(t.sels, func(sel selector) bool { return sel.matches(node, known) })
}

// deviceReaches reports whether device i of a slice reaching the node reaches it too.
func (t sliceTargets) deviceReaches(i int, node *corev1.Node, known bool) bool {
	return !t.perDevice || t.sels[i].matches(node, known)
}

// deviceShared reports whether device i of a slice reaching some node reaches nodes other
// than by name.
func (t sliceTargets) deviceShared(i int) bool {
	if !t.perDevice {
		i = 0
	}
	return t.sels[i].nodeName == ""
}
