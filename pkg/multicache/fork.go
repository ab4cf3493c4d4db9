package multicache

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Fork is a what-if on a Snapshot: pods added, removed or moved and nodes removed, read
// back through the snapshot's queries as if those changes had happened, with the cache's own
// accounting. It never touches the live cache nor the API and takes no lock; it holds only
// its changes, so a fork and each change cost what they change, not the cluster's size.
//
// A fork reads the snapshot it came from: do not update that snapshot while a fork of it is
// in use (a change then fails with ErrSnapshotMoved; reads would mix generations). Like its
// snapshot, a fork belongs to one goroutine. What it returns is shared and must not be
// modified.
type Fork struct {
	snap *Snapshot
	gen  int64
	// origin is the fork's state when made (its parent's changes then), what Revert returns
	// to; state is the current one.
	origin, state *forkState
	// requests remembers the pods' requests the fork computed, by pod (shared with the forks
	// made from it: pods are never changed).
	requests map[*corev1.Pod]store.Resources
}

// forkState is a fork's changes against its snapshot.
type forkState struct {
	// pods are the pods whose place differs from the snapshot's: the pod where it is now,
	// with spec.nodeName set, or nil where the fork removed it.
	pods map[types.NamespacedName]*corev1.Pod
	// byNode are the keys of pods whose place changed from or to a node.
	byNode map[string][]types.NamespacedName
	// removedNodes are the nodes removed.
	removedNodes map[string]bool
	// charged is, per node, what the fork added to the snapshot's charge (negative where it
	// released more than it added).
	charged map[string]*nodeCharge
	// disrupted counts, per budget, the snapshot's pods it covers that the fork removed
	// (moved ones included: a move is an eviction).
	disrupted map[types.NamespacedName]int32
}

// ErrSnapshotMoved is returned by a fork's changes once its snapshot was updated.
var ErrSnapshotMoved = errors.New("the snapshot was updated since the fork was made: fork it again")

// Fork returns a fork of the snapshot with no change.
func (s *Snapshot) Fork() *Fork {
	st := newForkState()
	return &Fork{snap: s, gen: s.Generation(), origin: st, state: st.clone(), requests: map[*corev1.Pod]store.Resources{}}
}

// Fork returns a fork of this fork: it starts with this fork's changes, and what it
// changes is its own (Revert on it leaves this fork's changes; this fork does not see it).
func (f *Fork) Fork() *Fork {
	return &Fork{snap: f.snap, gen: f.gen, origin: f.state.clone(), state: f.state.clone(), requests: f.requests}
}

// Revert drops the changes made on this fork since it was made.
func (f *Fork) Revert() { f.state = f.origin.clone() }

// AddPod places pod on node, as a scheduler would: its requests are charged to the node,
// it counts in its groups and reads as store.PodAssumed. A pod the snapshot holds pending
// (no node yet) is placed. The fork keeps a shallow copy of
// pod (with spec.nodeName set): do not change pod while the fork is in use. It
// fails when the node is unknown or removed, or the pod is on a node already (RemovePod it
// first to move it).
func (f *Fork) AddPod(pod *corev1.Pod, node string) error {
	if err := f.check(); err != nil {
		return err
	}
	key := store.PodKey(pod)
	if !f.hasNode(node) {
		return fmt.Errorf("adding pod %s to node %q: the fork has no such node", key, node)
	}
	ps, ok := f.PodState(key)
	if ok && ps.Pod.Spec.NodeName != "" {
		return fmt.Errorf("adding pod %s to node %q: it is on node %q already: RemovePod it first to move it", key, node, ps.Pod.Spec.NodeName)
	}
	// A shallow copy: the fork, like the cache, never changes a pod, so it shares the
	// caller's labels, containers and the rest (which the caller must not change either).
	placed := *pod
	placed.Spec.NodeName = node
	f.state.set(key, &placed)
	f.state.touch(node, key)
	f.charge(&placed, pod, +1)
	return nil
}

// RemovePod takes a pod off its node, as an eviction would: its charge is released, it
// leaves its groups, and a budget covering it allows one disruption less. It fails for a
// pod the fork does not hold.
func (f *Fork) RemovePod(key types.NamespacedName) error {
	if err := f.check(); err != nil {
		return err
	}
	ps, ok := f.PodState(key)
	if !ok {
		return fmt.Errorf("removing pod %s: the fork holds no such pod", key)
	}
	f.remove(key, ps.Pod)
	return nil
}

// RemoveNode removes a node and the pods on it (each as RemovePod). It fails for a node
// the fork does not hold.
func (f *Fork) RemoveNode(name string) error {
	if err := f.check(); err != nil {
		return err
	}
	if !f.hasNode(name) {
		return fmt.Errorf("removing node %q: the fork has no such node", name)
	}
	for _, ps := range f.PodsOnNode(name) {
		f.remove(store.PodKey(ps.Pod), ps.Pod)
	}
	f.state.removedNodes[name] = true
	return nil
}

// hasNode reports whether the fork holds a node: the snapshot's, not removed.
func (f *Fork) hasNode(name string) bool {
	_, ok := f.snap.NodeInfo(name)
	return ok && !f.state.removedNodes[name]
}

func (f *Fork) check() error {
	if f.snap.Generation() != f.gen {
		return ErrSnapshotMoved
	}
	return nil
}

// remove takes pod (key) off its node and, when it is one of the snapshot's pods removed
// for the first time, counts it against the budgets covering it.
func (f *Fork) remove(key types.NamespacedName, pod *corev1.Pod) {
	if base, ok := f.snap.PodState(key); ok && !f.state.has(key) {
		for _, b := range f.snap.PDBsForPod(base.Pod) {
			f.state.disrupted[b.Key]++
		}
	}
	f.state.set(key, nil)
	f.state.touch(pod.Spec.NodeName, key)
	f.charge(pod, pod, -1)
}

func newForkState() *forkState {
	return &forkState{pods: map[types.NamespacedName]*corev1.Pod{}, byNode: map[string][]types.NamespacedName{},
		removedNodes: map[string]bool{}, disrupted: map[types.NamespacedName]int32{}, charged: map[string]*nodeCharge{}}
}

// clone copies the state: what a fork made from it changes is its own.
func (s *forkState) clone() *forkState {
	c := &forkState{pods: cloneMap(s.pods), byNode: make(map[string][]types.NamespacedName, len(s.byNode)),
		removedNodes: cloneMap(s.removedNodes), disrupted: cloneMap(s.disrupted), charged: make(map[string]*nodeCharge, len(s.charged))}
	for n, keys := range s.byNode {
		c.byNode[n] = slices.Clip(keys)
	}
	for n, ch := range s.charged {
		c.charged[n] = ch.clone()
	}
	return c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (s *forkState) has(key types.NamespacedName) bool { _, ok := s.pods[key]; return ok }

func (s *forkState) set(key types.NamespacedName, pod *corev1.Pod) { s.pods[key] = pod }

// touch records that key's place changed from or to node.
func (s *forkState) touch(node string, key types.NamespacedName) {
	if node != "" && !slices.Contains(s.byNode[node], key) {
		s.byNode[node] = append(s.byNode[node], key)
	}
}
