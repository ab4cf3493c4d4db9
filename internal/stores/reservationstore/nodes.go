package reservationstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A reservation names a node the cache does not know (no Node, NMNode or CNR of that
// name: a typo, a node not created yet or gone): nothing is charged on a node that does not
// exist; it stays Pending, awaiting the node, and is placed when a source of the node
// arrives.

var (
	_ store.NodeHandler   = (*Store)(nil)
	_ store.NMNodeHandler = (*Store)(nil)
	_ store.CNRHandler    = (*Store)(nil)
)

// nodeExists reports whether the cache knows the node from one of its sources (a node that
// only has pods bound to it is not known).
func (s *Store) nodeExists(name string) bool {
	info, ok := s.h.GetNodeInfo(name)
	return ok && (info.Node != nil || info.NMNode != nil || info.CNR != nil)
}

// await leaves e Pending until node appears.
func (s *Store) await(e *entry, node string) {
	e.phase, e.node, e.awaiting = v1alpha1.ReservationPending, "", node
	addTo(s.awaitingNode, node, e.key, struct{}{})
}

// unawait forgets that e awaits a node.
func (s *Store) unawait(e *entry) {
	if e.awaiting != "" {
		removeFrom(s.awaitingNode, e.awaiting, e.key)
		e.awaiting = ""
	}
}

// nodeAppeared places the reservations that awaited node.
func (s *Store) nodeAppeared(node string) {
	keys := s.awaitingNode[node]
	if len(keys) == 0 || !s.nodeExists(node) {
		return
	}
	for key := range keys {
		if e, ok := s.rsvs.Get(key); ok && e.phase == v1alpha1.ReservationPending {
			s.place(e)
			s.changed(e)
		}
	}
}

// AddNode implements stores.NodeHandler.
func (s *Store) AddNode(node *corev1.Node) { s.nodeAppeared(node.Name) }

// UpdateNode implements stores.NodeHandler.
func (s *Store) UpdateNode(_, node *corev1.Node) { s.nodeAppeared(node.Name) }

// DeleteNode implements stores.NodeHandler: what is placed there stays (a node deleted and
// created again keeps its reservations), but for what the leader recorded Pending
// (awaitAsRecorded).
func (s *Store) DeleteNode(node *corev1.Node) { s.sourceGone(node.Name, fromNode) }

// AddNMNode implements stores.NMNodeHandler.
func (s *Store) AddNMNode(nm *v1alpha1.NMNode) { s.nodeAppeared(nm.Name) }

// UpdateNMNode implements stores.NMNodeHandler.
func (s *Store) UpdateNMNode(_, nm *v1alpha1.NMNode) { s.nodeAppeared(nm.Name) }

// DeleteNMNode implements stores.NMNodeHandler, as DeleteNode.
func (s *Store) DeleteNMNode(nm *v1alpha1.NMNode) { s.sourceGone(nm.Name, fromNMNode) }

// AddCNR implements stores.CNRHandler.
func (s *Store) AddCNR(cnr *v1alpha1.CustomNodeResource) { s.nodeAppeared(cnr.Name) }

// UpdateCNR implements stores.CNRHandler.
func (s *Store) UpdateCNR(_, cnr *v1alpha1.CustomNodeResource) { s.nodeAppeared(cnr.Name) }

// DeleteCNR implements stores.CNRHandler, as DeleteNode.
func (s *Store) DeleteCNR(cnr *v1alpha1.CustomNodeResource) { s.sourceGone(cnr.Name, fromCNR) }

// nodeSource is one of the objects that make a node known.
type nodeSource int

const (
	fromNode nodeSource = iota
	fromNMNode
	fromCNR
)

// sourceGone applies the leader's recorded Pending to the reservations placed on node once
// the last of its sources is gone (the stores see a delete in any order, so the source being
// deleted does not count).
func (s *Store) sourceGone(node string, gone nodeSource) {
	info, ok := s.h.GetNodeInfo(node)
	if ok && ((info.Node != nil && gone != fromNode) || (info.NMNode != nil && gone != fromNMNode) ||
		(info.CNR != nil && gone != fromCNR)) {
		return
	}
	for _, e := range s.byNode[node] {
		s.awaitAsRecorded(e)
	}
}

// awaitAsRecorded is placeAsRecorded's converse, for a replica whose watches ran late: it
// placed a reservation on a node the leader did not know (one that went before the leader
// saw the reservation), and the leader recorded Pending. Once this replica does not know the
// node either, the record is an input: the placeholder goes and the reservation awaits the
// node with no times, as on the leader. A reservation with an owner keeps it.
func (s *Store) awaitAsRecorded(e *entry) {
	if e.phase != v1alpha1.ReservationReserved || e.provisional || e.r.Status.Phase != v1alpha1.ReservationPending ||
		e.node == "" || e.r.Spec.NodeName != e.node {
		return
	}
	node := e.node
	s.release(e)
	e.reservedAt, e.expiresAt = time.Time{}, time.Time{}
	s.await(e, node)
	s.changed(e)
}

// placeAsRecorded takes what a status records about a reservation this replica awaits the
// node of: the leader saw the node, and what a status records is an input, as at a start
// (see place). Reserved places it at the recorded reservedAt; Expired ends it at
// the recorded times; Matched is record's (resolveRecorded).
func (s *Store) placeAsRecorded(e *entry) {
	if e.phase != v1alpha1.ReservationPending || e.awaiting == "" {
		return
	}
	st := e.r.Status
	if t := st.ReservedAt; t != nil {
		e.reservedAt = t.Time
	}
	switch st.Phase {
	case v1alpha1.ReservationReserved:
		s.place(e)
	case v1alpha1.ReservationExpired:
		s.unawait(e)
		s.expiredAsRecorded(e)
	}
}

// expiredAsRecorded makes e Expired at the expiry its status records, else at its TTL from
// e.reservedAt: the garbage collector counts its grace from it, across a restart too.
func (s *Store) expiredAsRecorded(e *entry) {
	e.phase, e.node = v1alpha1.ReservationExpired, e.r.Spec.NodeName
	if t := e.r.Status.ExpiresAt; t != nil {
		e.expiresAt = t.Time
	} else if !e.reservedAt.IsZero() {
		e.expiresAt = e.reservedAt.Add(s.ttl(e))
	}
}
