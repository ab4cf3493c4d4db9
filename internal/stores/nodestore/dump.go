package nodestore

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// NodeDump is the debug view of one node.
type NodeDump struct {
	// Sources lists which of Node, NMNode, CustomNodeResource exist.
	Sources               []string            `json:"sources"`
	Allocatable           corev1.ResourceList `json:"allocatable"`
	Capacity              corev1.ResourceList `json:"capacity"`
	Requested             corev1.ResourceList `json:"requested"`
	BestEffortAllocatable corev1.ResourceList `json:"bestEffortAllocatable"`
	BestEffortRequested   corev1.ResourceList `json:"bestEffortRequested"`
	Reserved              corev1.ResourceList `json:"reserved"`
	// DRARequested is what the pods request of extended resources DRA devices serve here
	// (NodeInfo.DRARequested): charged to the devices, not to allocatable.
	DRARequested corev1.ResourceList `json:"draRequested"`
	// Pods are namespace/name, sorted.
	Pods []string `json:"pods"`
	// Reservations are the namespace/name of the reservations charged here, sorted.
	Reservations []string `json:"reservations"`
	Generation   int64    `json:"generation"`
}

// Dump implements stores.Store: NodeDump by node name.
func (s *Store) Dump() any {
	out := make(map[string]NodeDump, s.nodes.Len())
	s.Range(func(info *store.NodeInfo) bool {
		out[info.Name] = DumpNode(info)
		return true
	})
	return out
}

// Names returns the name of every node held; call it with the handler's read lock held.
func (s *Store) Names() []string {
	names := make([]string, 0, s.nodes.Len())
	s.nodes.Range(func(name string, _ *store.NodeInfo) bool {
		names = append(names, name)
		return true
	})
	return names
}

// DumpNode renders one NodeInfo.
func DumpNode(info *store.NodeInfo) NodeDump {
	d := NodeDump{
		Sources:               []string{},
		Allocatable:           info.Allocatable.ResourceList(),
		Capacity:              info.Capacity.ResourceList(),
		Requested:             info.Requested.ResourceList(),
		BestEffortAllocatable: info.BestEffortAllocatable.ResourceList(),
		BestEffortRequested:   info.BestEffortRequested.ResourceList(),
		Reserved:              info.Reserved.ResourceList(),
		DRARequested:          info.DRARequested.ResourceList(),
		Pods:                  make([]string, 0, len(info.Pods)),
		Reservations:          make([]string, 0, len(info.Placeholders)),
		Generation:            info.Generation,
	}
	if info.Node != nil {
		d.Sources = append(d.Sources, "Node")
	}
	if info.NMNode != nil {
		d.Sources = append(d.Sources, "NMNode")
	}
	if info.CNR != nil {
		d.Sources = append(d.Sources, "CustomNodeResource")
	}
	for _, p := range info.Pods {
		d.Pods = append(d.Pods, p.Namespace+"/"+p.Name)
	}
	for _, p := range info.Placeholders {
		key, _ := store.PlaceholderOf(p)
		d.Reservations = append(d.Reservations, key.String())
	}
	sort.Strings(d.Pods)
	sort.Strings(d.Reservations)
	return d
}
