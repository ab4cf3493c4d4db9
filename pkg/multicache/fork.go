package multicache

import (
	"errors"
	"fmt"

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
// modified; a NodeInfo it returned keeps answering as it did when returned.
type Fork struct {
	snap *Snapshot
	gen  int64
	// origin is the fork's state when made (its parent's changes then; nil for none), what
	// Revert returns to; state is the current one.
	origin *forkState
	state  forkState
	// views and podLists hold the NodeInfos the fork made for its reads: never reused, so
	// what it returned stays as it was.
	views    chunks[store.NodeInfo]
	podLists chunks[*corev1.Pod]
}

// ErrSnapshotMoved is returned by a fork's changes once its snapshot was updated.
var ErrSnapshotMoved = errors.New("the snapshot was updated since the fork was made: fork it again")

// Fork returns a fork of the snapshot with no change.
func (s *Snapshot) Fork() *Fork { return &Fork{snap: s, gen: s.Generation()} }

// Fork returns a fork of this fork: it starts with this fork's changes, and what it
// changes is its own (Revert on it leaves this fork's changes; this fork does not see it).
func (f *Fork) Fork() *Fork {
	child := &Fork{snap: f.snap, gen: f.gen, origin: &forkState{}}
	child.origin.copyFrom(&f.state)
	child.state.copyFrom(child.origin)
	return child
}

// Revert drops the changes made on this fork since it was made.
func (f *Fork) Revert() {
	f.state.reset()
	if f.origin != nil {
		f.state.copyFrom(f.origin)
	}
}

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
	if pod == nil || pod.Name == "" {
		return fmt.Errorf("adding a pod to node %q: the pod is nil or has no name", node)
	}
	key := store.PodKey(pod)
	if !f.hasNode(node) {
		return fmt.Errorf("adding pod %s to node %q: the fork has no such node", key, node)
	}
	change, changed := f.state.pods[key]
	if !changed {
		if ps, ok := f.snap.PodState(key); ok {
			change.pod = ps.Pod
		}
	}
	if change.pod != nil && change.pod.Spec.NodeName != "" {
		return fmt.Errorf("adding pod %s to node %q: it is on node %q already: RemovePod it first to move it", key, node, change.pod.Spec.NodeName)
	}
	// A shallow copy: the fork, like the cache, never changes a pod, so it shares the
	// caller's labels, containers and the rest (which the caller must not change either).
	placed := f.state.newPod(pod)
	placed.Spec.NodeName = node
	req := change.req
	if change.source != pod {
		req = f.requestsOf(pod)
	}
	f.state.setPod(key, podChange{pod: placed, source: pod, req: req})
	d := f.state.delta(node)
	d.added = f.state.appendPod(d.added, placed)
	f.charge(d, placed, req, +1)
	return nil
}

// RemovePod takes a pod off its node, as an eviction would: its charge is released, it
// leaves its groups, and a budget covering it allows one disruption less, unless the
// eviction API would not count it (a pod Pending, finished or being deleted). It fails for
// a pod the fork does not hold.
func (f *Fork) RemovePod(key types.NamespacedName) error {
	if err := f.check(); err != nil {
		return err
	}
	change, changed := f.state.pods[key]
	pod := change.pod
	if !changed {
		if ps, ok := f.snap.PodState(key); ok {
			pod = ps.Pod
		}
	}
	if pod == nil {
		return fmt.Errorf("removing pod %s: the fork holds no such pod", key)
	}
	f.remove(key, pod, change, changed)
	return nil
}

// RemoveNode removes a node and the pods charged to it (PodsOnNode, each as RemovePod; a
// finished pod bound there stays, as in the cache until the API deletes it). It fails for
// a node the fork does not hold.
func (f *Fork) RemoveNode(name string) error {
	if err := f.check(); err != nil {
		return err
	}
	if !f.hasNode(name) {
		return fmt.Errorf("removing node %q: the fork has no such node", name)
	}
	for _, ps := range f.PodsOnNode(name) {
		key := store.PodKey(ps.Pod)
		change, changed := f.state.pods[key]
		f.remove(key, ps.Pod, change, changed)
	}
	f.state.delta(name).removed = true
	f.state.removedNodes++
	return nil
}

// hasNode reports whether the fork holds a node: the snapshot's, not removed.
func (f *Fork) hasNode(name string) bool {
	_, ok := f.snap.NodeInfo(name)
	return ok && !f.state.removed(name)
}

func (f *Fork) check() error {
	if f.snap.Generation() != f.gen {
		return ErrSnapshotMoved
	}
	return nil
}

// remove takes pod (key) off its node and, when it is one of the snapshot's pods removed
// for the first time, counts it against the budgets covering it. change and changed are
// what the fork holds for key.
func (f *Fork) remove(key types.NamespacedName, pod *corev1.Pod, change podChange, changed bool) {
	removed := podChange{source: change.source, req: change.req}
	switch {
	case changed: // a pod the fork placed
		d := f.state.delta(pod.Spec.NodeName)
		d.added = deletePod(d.added, pod)
		f.charge(d, pod, removed.req, -1)
	default:
		if disruptsBudgets(pod) {
			for _, b := range f.snap.PDBsForPod(pod) {
				f.state.disrupt(b.Key)
			}
		}
		// Only a node that holds the pod has a charge of it to release (a finished or
		// pending pod has none).
		if held, req, ok := f.snap.s.Nodes().PodCharge(pod.Spec.NodeName, pod); ok {
			d := f.state.delta(pod.Spec.NodeName)
			d.gone = f.state.appendPod(d.gone, held)
			removed = podChange{source: pod, req: req}
			f.charge(d, held, req, -1)
		}
	}
	f.state.setPod(key, removed)
}

// requestsOf returns pod's requests with the cache's accounting: what the snapshot's node
// was charged for that very object, else computed.
func (f *Fork) requestsOf(pod *corev1.Pod) store.Resources {
	if pod.Spec.NodeName != "" {
		if _, req, ok := f.snap.s.Nodes().PodCharge(pod.Spec.NodeName, pod); ok {
			return req
		}
	}
	return f.snap.acct.PodRequests(pod)
}

// charge adds (sign +1) or takes off (-1) a pod's requests on the node of d as the node
// store charges them: to the best-effort pool for a best-effort pod, and an extended
// resource the node's allocatable does not list to DRARequested (DRA devices serve it
// there, or the pod does not fit at all). A finished pod holds nothing.
func (f *Fork) charge(d *nodeDelta, pod *corev1.Pod, req store.Resources, sign int) {
	d.view = nil
	if store.IsTerminal(pod) {
		return
	}
	var dra store.Resources
	if len(req.Scalar) > 0 {
		node, _ := f.snap.NodeInfo(d.name)
		onNode := store.Resources{MilliCPU: req.MilliCPU, Memory: req.Memory, EphemeralStorage: req.EphemeralStorage, Pods: req.Pods}
		for name, v := range req.Scalar {
			part := &onNode
			if _, listed := node.Allocatable.Scalar[name]; !listed {
				part = &dra
			}
			if part.Scalar == nil {
				part.Scalar = map[corev1.ResourceName]int64{}
			}
			part.Scalar[name] = v
		}
		req = onNode
	}
	pool := &d.charge.requested
	if store.IsBestEffort(pod) {
		pool = &d.charge.bestEffort
	}
	if sign > 0 {
		pool.Add(req)
		d.charge.dra.Add(dra)
	} else {
		pool.Sub(req)
		d.charge.dra.Sub(dra)
	}
}

// disruptsBudgets reports whether evicting pod counts against its budgets: the eviction API
// ignores them for a pod Pending, Succeeded or Failed, or being deleted.
func disruptsBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}
