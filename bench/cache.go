package bench

import (
	corev1 "k8s.io/api/core/v1"
)

// Cache is one cache under test, driven through the calls a scheduler's informers and
// scheduling cycle make. Every implementation forwards each call to the cache's own method
// and adds nothing else to the path.
type Cache interface {
	// AddNode adds a node.
	AddNode(node *corev1.Node) error
	// AddPod adds a bound pod, as the informer reports it.
	AddPod(pod *corev1.Pod) error
	// UpdatePod replaces a cached pod with its next version.
	UpdatePod(oldPod, newPod *corev1.Pod) error
	// RemovePod removes a cached pod.
	RemovePod(pod *corev1.Pod) error
	// AssumePod assumes a pod onto its spec.nodeName and finishes its binding (the
	// scheduler's side of a placement).
	AssumePod(pod *corev1.Pod) error
	// ForgetPod undoes AssumePod.
	ForgetPod(pod *corev1.Pod) error
	// GetPod returns the cached object of a pod.
	GetPod(pod *corev1.Pod) (*corev1.Pod, error)
	// NewSnapshot returns an empty snapshot for UpdateSnapshot to fill.
	NewSnapshot() Snapshot
	// UpdateSnapshot brings a snapshot up to date, copying what changed since its last
	// update (everything, for an empty one).
	UpdateSnapshot(snap Snapshot) error
	// SnapshotLen returns the number of nodes a snapshot holds.
	SnapshotLen(snap Snapshot) int
	// Close releases what the cache runs in the background.
	Close()
}

// Snapshot is a cache's own snapshot type, opaque to the benchmarks.
type Snapshot any

// Variant is one configuration of a cache under test.
type Variant struct {
	// Name names the variant in benchmark names and tables.
	Name string
	// New builds an empty cache.
	New func() Cache
}
