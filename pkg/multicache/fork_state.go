package multicache

import (
	"slices"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// forkState is a fork's changes against its snapshot. Its maps are made on first use and
// kept through a Revert, so a fork reused with Revert allocates little.
type forkState struct {
	// pods are the pods whose place differs from the snapshot's.
	pods map[types.NamespacedName]podChange
	// nodes are the nodes a change touched (their deltas in deltas).
	nodes  map[string]*nodeDelta
	deltas chunks[nodeDelta]
	// removedNodes counts the deltas of removed nodes.
	removedNodes int
	// disrupted counts, per budget, the snapshot's pods it covers that the fork removed
	// (moved ones included: a move is an eviction).
	disrupted map[types.NamespacedName]int32
	// lists holds the backing arrays of the deltas' pod lists; placed holds the pods
	// AddPod placed (views, in fork_read.go, have chunks of their own).
	lists  chunks[*corev1.Pod]
	placed chunks[corev1.Pod]
}

// podChange is where a pod is in the fork: pod, with spec.nodeName set, or nowhere (nil).
// source is the object the fork was last handed for it and req its requests, kept so that a
// move adds back what it removed without computing the requests again.
type podChange struct {
	pod, source *corev1.Pod
	req         store.Resources
}

// nodeDelta is what a fork changed on one node of its snapshot.
type nodeDelta struct {
	name    string
	removed bool
	// gone are the snapshot's pods (the objects of its Pods) the fork took off the node;
	// added are the pods it placed there.
	gone, added []*corev1.Pod
	// charge is what the fork added to the snapshot's sums (negative where it released more).
	charge nodeCharge
	// view is the node as the fork reads it, made on the first read after a change.
	view *store.NodeInfo
}

// nodeCharge is what a fork changed of a node's charge.
type nodeCharge struct{ requested, bestEffort, dra store.Resources }

func (s *forkState) removed(node string) bool {
	if s.removedNodes == 0 {
		return false
	}
	d := s.nodes[node]
	return d != nil && d.removed
}

// deltaOf returns the delta of a node, nil when the fork did not change it.
func (s *forkState) deltaOf(node string) *nodeDelta { return s.nodes[node] }

// delta returns the delta of a node, made empty when the fork did not change it yet.
func (s *forkState) delta(node string) *nodeDelta {
	if d := s.nodes[node]; d != nil {
		return d
	}
	if s.nodes == nil {
		s.nodes = map[string]*nodeDelta{}
	}
	d := &s.deltas.take(1)[0]
	d.name = node
	s.nodes[node] = d
	return d
}

func (s *forkState) setPod(key types.NamespacedName, c podChange) {
	if s.pods == nil {
		s.pods = map[types.NamespacedName]podChange{}
	}
	s.pods[key] = c
}

func (s *forkState) disrupt(pdb types.NamespacedName) {
	if s.disrupted == nil {
		s.disrupted = map[types.NamespacedName]int32{}
	}
	s.disrupted[pdb]++
}

// newPod returns a shallow copy of pod that the fork owns.
func (s *forkState) newPod(pod *corev1.Pod) *corev1.Pod {
	p := &s.placed.take(1)[0]
	*p = *pod
	return p
}

// appendPod appends pod to a delta's list, the list's first room taken from s.lists.
func (s *forkState) appendPod(list []*corev1.Pod, pod *corev1.Pod) []*corev1.Pod {
	if list == nil {
		list = s.lists.take(2)[:0]
	}
	return append(list, pod)
}

// deletePod removes pod from list (order is not kept).
func deletePod(list []*corev1.Pod, pod *corev1.Pod) []*corev1.Pod {
	if i := slices.Index(list, pod); i >= 0 {
		last := len(list) - 1
		list[i], list[last] = list[last], nil
		return list[:last]
	}
	return list
}

// reset drops every change, keeping the maps and the deltas' array for reuse. Placed pods
// and views are not reused: what the fork returned stays as it was.
func (s *forkState) reset() {
	clear(s.pods)
	clear(s.nodes)
	s.deltas.reset()
	s.removedNodes = 0
	clear(s.disrupted)
	s.lists.reset()
}

// copyFrom adds o's changes to s (empty): what s changes next is its own.
func (s *forkState) copyFrom(o *forkState) {
	for k, c := range o.pods {
		s.setPod(k, c)
	}
	for k, n := range o.disrupted {
		if s.disrupted == nil {
			s.disrupted = map[types.NamespacedName]int32{}
		}
		s.disrupted[k] = n
	}
	for _, od := range o.nodes {
		d := s.delta(od.name)
		d.removed, d.view = od.removed, od.view
		d.charge = nodeCharge{requested: od.charge.requested.Clone(), bestEffort: od.charge.bestEffort.Clone(), dra: od.charge.dra.Clone()}
		for _, p := range od.gone {
			d.gone = s.appendPod(d.gone, p)
		}
		for _, p := range od.added {
			d.added = s.appendPod(d.added, p)
		}
	}
	s.removedNodes = o.removedNodes
}

// chunks hands out slices of T from arrays it makes a chunk at a time (up to about 16 KiB
// each), so that many small lists or objects cost one allocation. A slice it returned is never handed out again, except by
// reset for a chunks whose slices were all dropped.
type chunks[T any] struct{ chunk []T }

// take returns n zero Ts, their slice capped at n (an append to it reallocates).
func (c *chunks[T]) take(n int) []T {
	if cap(c.chunk)-len(c.chunk) < n {
		var zero T
		c.chunk = make([]T, 0, max(n, min(2*cap(c.chunk), 16<<10/int(unsafe.Sizeof(zero))), 4))
	}
	i := len(c.chunk)
	c.chunk = c.chunk[:i+n]
	return c.chunk[i : i+n : i+n]
}

// reset hands the current chunk out again from its start.
func (c *chunks[T]) reset() {
	clear(c.chunk)
	c.chunk = c.chunk[:0]
}
