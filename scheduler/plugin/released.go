package plugin

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// heldWaiters are the pods Filter turned away because room was kept on a node, with the
// reservations that kept it: when one of them stops keeping room (it expired, was
// released, deleted or consumed), the pods are tried again. kube-scheduler sees no event
// for most of these (a hold's expiry is the cache's own), and would otherwise wait for its
// unschedulable-pods flush.
type heldWaiters struct {
	mu     sync.Mutex
	byNode map[string]*nodeWaiters
}

// nodeWaiters are the pods turned away from one node and what kept its room then.
type nodeWaiters struct {
	pods     map[string]*corev1.Pod
	reserved map[types.NamespacedName]bool
}

// turnedAway records that pod was turned away from node by the room kept there.
func (p *Plugin) turnedAway(node string, pod *corev1.Pod) {
	reserved := map[types.NamespacedName]bool{}
	for _, r := range p.reader.ReservationsOnNode(node) {
		if r.Phase == v1alpha1.ReservationReserved {
			reserved[r.Key] = true
		}
	}
	w := &p.held
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byNode == nil {
		w.byNode = map[string]*nodeWaiters{}
	}
	nw := w.byNode[node]
	if nw == nil {
		nw = &nodeWaiters{pods: map[string]*corev1.Pod{}, reserved: map[types.NamespacedName]bool{}}
		w.byNode[node] = nw
	}
	nw.pods[klog.KObj(pod).String()] = pod
	for k := range reserved {
		nw.reserved[k] = true
	}
}

// released returns the pods turned away from nodes where a reservation that kept room then
// keeps none now, and forgets them.
func (p *Plugin) released() map[string]*corev1.Pod {
	w := &p.held
	w.mu.Lock()
	nodes := make(map[string]*nodeWaiters, len(w.byNode))
	for n, nw := range w.byNode {
		nodes[n] = nw
	}
	w.mu.Unlock()

	var out map[string]*corev1.Pod
	for node, nw := range nodes {
		still := map[types.NamespacedName]bool{}
		for _, r := range p.reader.ReservationsOnNode(node) {
			if r.Phase == v1alpha1.ReservationReserved {
				still[r.Key] = true
			}
		}
		w.mu.Lock()
		// No reservation recorded: what turned the pods away ended before Filter saw it.
		gone := len(nw.reserved) == 0
		for k := range nw.reserved {
			gone = gone || !still[k]
		}
		if gone && w.byNode[node] == nw {
			delete(w.byNode, node)
			if out == nil {
				out = map[string]*corev1.Pod{}
			}
			for k, pod := range nw.pods {
				out[k] = pod
			}
		}
		w.mu.Unlock()
	}
	return out
}
