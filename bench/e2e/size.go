package e2e

import (
	"fmt"
	"strings"
)

// Size is the shape of the populated cluster. Everything but Nodes and Pods is derived from
// them by the ratios below, so that the three sizes are the same cluster at three scales.
type Size struct {
	// Name is small, medium or large.
	Name string
	// Nodes and Pods are the counts every subject must hold.
	Nodes, Pods int
	// DevicesPerNode, when positive, adds DRA objects (devices.go): a ResourceSlice per node
	// with that many devices, one DeviceClass, and ClaimsPerNode allocated claims per node
	// (at most DevicesPerNode).
	DevicesPerNode, ClaimsPerNode int
	// RealisticPods populates pods shaped like a running cluster's (realpods.go): created by
	// the ReplicaSet controller's field manager, status written by the kubelet's. Otherwise
	// pods are MakePod's: small, one managedFields entry, no status.
	RealisticPods bool
}

// Derived ratios of the population.
const (
	// PodsPerReplicaSet is how many pods each ReplicaSet owns.
	PodsPerReplicaSet = 10
	// PodsPerNamespace bounds the pods of one namespace.
	PodsPerNamespace = 3000
	// ReplicaSetsPerPodGroup: one ReplicaSet in this many is a gang (its pods carry the
	// pod-group label of a PodGroup).
	ReplicaSetsPerPodGroup = 10
	// ReplicaSetsPerPDB: one ReplicaSet in this many is covered by a PDB.
	ReplicaSetsPerPDB = 5
	// NodesPerReservation: one node in this many holds a Reservation.
	NodesPerReservation = 10
)

// Sizes are the sizes `make bench-e2e SIZE=...` knows.
var Sizes = map[string]Size{
	"small":  {Name: "small", Nodes: 100, Pods: 3000},
	"medium": {Name: "medium", Nodes: 1000, Pods: 30000},
	"large":  {Name: "large", Nodes: 5000, Pods: 150000},
}

// ParseSize returns the named size, or a custom one written NODES/PODS (e.g. 200/6000).
func ParseSize(s string) (Size, error) {
	if sz, ok := Sizes[s]; ok {
		return sz, nil
	}
	var n, p int
	if _, err := fmt.Sscanf(s, "%d/%d", &n, &p); err == nil && n > 0 && p >= 0 && !strings.ContainsAny(s, " ") {
		return Size{Name: s, Nodes: n, Pods: p}, nil
	}
	return Size{}, fmt.Errorf("unknown size %q: small, medium, large or NODES/PODS", s)
}

// ReplicaSets is the number of ReplicaSets (the last one may own fewer pods).
func (s Size) ReplicaSets() int { return ceilDiv(s.Pods, PodsPerReplicaSet) }

// Namespaces is the number of namespaces the pods are spread over.
func (s Size) Namespaces() int { return max(1, ceilDiv(s.Pods, PodsPerNamespace)) }

// PodGroups is the number of PodGroups.
func (s Size) PodGroups() int { return ceilDiv(s.ReplicaSets(), ReplicaSetsPerPodGroup) }

// PDBs is the number of PodDisruptionBudgets.
func (s Size) PDBs() int { return ceilDiv(s.ReplicaSets(), ReplicaSetsPerPDB) }

// Reservations is the number of Reservations.
func (s Size) Reservations() int { return ceilDiv(s.Nodes, NodesPerReservation) }

// NMNodes and CNRs: every node has one of each.
func (s Size) NMNodes() int { return s.Nodes }

// CNRs is the number of CustomNodeResources (one per node).
func (s Size) CNRs() int { return s.Nodes }

// WithDevices returns s with devicesPerNode devices and claimsPerNode allocated claims per
// node, or an error when the claims would not fit on the devices.
func (s Size) WithDevices(devicesPerNode, claimsPerNode int) (Size, error) {
	if devicesPerNode < 0 || claimsPerNode < 0 || claimsPerNode > devicesPerNode {
		return s, fmt.Errorf("devices: %d devices and %d claims per node: want 0 <= claims <= devices (each claim takes one device of its node)",
			devicesPerNode, claimsPerNode)
	}
	s.DevicesPerNode, s.ClaimsPerNode = devicesPerNode, claimsPerNode
	return s, nil
}

// PodShape names the pods of s: realistic or synthetic.
func (s Size) PodShape() string {
	if s.RealisticPods {
		return PodsRealistic
	}
	return PodsSynthetic
}

// The shapes of populated pods (-pods).
const (
	PodsRealistic = "realistic"
	PodsSynthetic = "synthetic"
)

// WithPodShape returns s with the named pods: realistic, synthetic, or "" for the default
// of its size (realistic at large, where the figures users see are taken; synthetic
// elsewhere, for continuity with earlier runs).
func (s Size) WithPodShape(shape string) (Size, error) {
	switch shape {
	case "":
		s.RealisticPods = s.Name == "large"
	case PodsRealistic, PodsSynthetic:
		s.RealisticPods = shape == PodsRealistic
	default:
		return s, fmt.Errorf("pods: unknown shape %q: realistic (a controller's create and a kubelet's status) or synthetic (small, no status)", shape)
	}
	return s, nil
}

// ResourceSlices is the number of ResourceSlices: one per node with devices.
func (s Size) ResourceSlices() int {
	if s.DevicesPerNode == 0 {
		return 0
	}
	return s.Nodes
}

// Devices is the number of devices the slices publish.
func (s Size) Devices() int { return s.Nodes * s.DevicesPerNode }

// Claims is the number of allocated ResourceClaims.
func (s Size) Claims() int { return s.Nodes * s.ClaimsPerNode }

// DeviceClasses is the number of DeviceClasses: one with devices.
func (s Size) DeviceClasses() int { return min(1, s.DevicesPerNode) }

// Objects is every object the population writes.
func (s Size) Objects() int {
	return s.Nodes + s.Pods + s.ReplicaSets() + s.Namespaces() + s.PodGroups() + s.PDBs() + s.Reservations() +
		s.NMNodes() + s.CNRs() + s.ResourceSlices() + s.Claims() + s.DeviceClasses()
}

func (s Size) String() string {
	str := fmt.Sprintf("%s (%d nodes, %d %s pods, %d ReplicaSets, %d PodGroups, %d PDBs, %d Reservations, %d NMNodes, %d CNRs",
		s.Name, s.Nodes, s.Pods, s.PodShape(), s.ReplicaSets(), s.PodGroups(), s.PDBs(), s.Reservations(), s.NMNodes(), s.CNRs())
	if s.DevicesPerNode > 0 {
		str += fmt.Sprintf("; devices: %d ResourceSlices with %d devices, %d allocated ResourceClaims, %d DeviceClass",
			s.ResourceSlices(), s.Devices(), s.Claims(), s.DeviceClasses())
	}
	return str + ")"
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
