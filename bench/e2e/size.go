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

// Objects is every object the population writes.
func (s Size) Objects() int {
	return s.Nodes + s.Pods + s.ReplicaSets() + s.Namespaces() + s.PodGroups() + s.PDBs() + s.Reservations() +
		s.NMNodes() + s.CNRs()
}

func (s Size) String() string {
	return fmt.Sprintf("%s (%d nodes, %d pods, %d ReplicaSets, %d PodGroups, %d PDBs, %d Reservations, %d NMNodes, %d CNRs)",
		s.Name, s.Nodes, s.Pods, s.ReplicaSets(), s.PodGroups(), s.PDBs(), s.Reservations(), s.NMNodes(), s.CNRs())
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
