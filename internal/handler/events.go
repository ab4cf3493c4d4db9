package handler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// objectEvent runs one event of a kind other than Pod: lock, validate, fan out, count.
func objectEvent[K comparable, T any](h *Handler, k *objectKind[K, T], op stores.Op, oldObj, newObj T) error {
	var zero T
	if (op != stores.OpDelete && any(newObj) == any(zero)) || (op != stores.OpAdd && any(oldObj) == any(zero)) {
		return h.rejectUnlocked(k.kind, op, "<nil>", fmt.Errorf("%w: nil object", stores.ErrInvalidObject))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return objectEventLocked(h, k, op, oldObj, newObj)
}

// objectEventLocked validates and applies one event of a kind other than Pod under the lock
// the caller holds.
func objectEventLocked[K comparable, T any](h *Handler, k *objectKind[K, T], op stores.Op, oldObj, newObj T) error {
	key, charged, err := k.plan(op, oldObj, newObj)
	if err != nil {
		return h.reject(k.kind, op, fmt.Sprint(key), err)
	}
	k.apply(op, key, charged, newObj, h.sample())
	h.accept(k.kind, op)
	return nil
}

// AddNode implements ClusterEventsHandler.
func (h *Handler) AddNode(node *corev1.Node) error {
	return objectEvent(h, h.nodeKind, stores.OpAdd, nil, node)
}

// UpdateNode implements ClusterEventsHandler.
func (h *Handler) UpdateNode(oldNode, newNode *corev1.Node) error {
	return objectEvent(h, h.nodeKind, stores.OpUpdate, oldNode, newNode)
}

// DeleteNode implements ClusterEventsHandler.
func (h *Handler) DeleteNode(node *corev1.Node) error {
	return objectEvent(h, h.nodeKind, stores.OpDelete, node, nil)
}

// AddNMNode implements ClusterEventsHandler.
func (h *Handler) AddNMNode(nm *v1alpha1.NMNode) error {
	return objectEvent(h, h.nmNodeKind, stores.OpAdd, nil, nm)
}

// UpdateNMNode implements ClusterEventsHandler.
func (h *Handler) UpdateNMNode(oldNM, newNM *v1alpha1.NMNode) error {
	return objectEvent(h, h.nmNodeKind, stores.OpUpdate, oldNM, newNM)
}

// DeleteNMNode implements ClusterEventsHandler.
func (h *Handler) DeleteNMNode(nm *v1alpha1.NMNode) error {
	return objectEvent(h, h.nmNodeKind, stores.OpDelete, nm, nil)
}

// AddCNR implements ClusterEventsHandler.
func (h *Handler) AddCNR(cnr *v1alpha1.CustomNodeResource) error {
	return objectEvent(h, h.cnrKind, stores.OpAdd, nil, cnr)
}

// UpdateCNR implements ClusterEventsHandler.
func (h *Handler) UpdateCNR(oldCNR, newCNR *v1alpha1.CustomNodeResource) error {
	return objectEvent(h, h.cnrKind, stores.OpUpdate, oldCNR, newCNR)
}

// DeleteCNR implements ClusterEventsHandler.
func (h *Handler) DeleteCNR(cnr *v1alpha1.CustomNodeResource) error {
	return objectEvent(h, h.cnrKind, stores.OpDelete, cnr, nil)
}

// AddPodGroup implements ClusterEventsHandler.
func (h *Handler) AddPodGroup(pg *v1alpha1.PodGroup) error {
	return objectEvent(h, h.podGroupKind, stores.OpAdd, nil, pg)
}

// UpdatePodGroup implements ClusterEventsHandler.
func (h *Handler) UpdatePodGroup(oldPG, newPG *v1alpha1.PodGroup) error {
	return objectEvent(h, h.podGroupKind, stores.OpUpdate, oldPG, newPG)
}

// DeletePodGroup implements ClusterEventsHandler.
func (h *Handler) DeletePodGroup(pg *v1alpha1.PodGroup) error {
	return objectEvent(h, h.podGroupKind, stores.OpDelete, pg, nil)
}

// AddPDB implements ClusterEventsHandler.
func (h *Handler) AddPDB(pdb *policyv1.PodDisruptionBudget) error {
	return objectEvent(h, h.pdbKind, stores.OpAdd, nil, pdb)
}

// UpdatePDB implements ClusterEventsHandler.
func (h *Handler) UpdatePDB(oldPDB, newPDB *policyv1.PodDisruptionBudget) error {
	return objectEvent(h, h.pdbKind, stores.OpUpdate, oldPDB, newPDB)
}

// DeletePDB implements ClusterEventsHandler.
func (h *Handler) DeletePDB(pdb *policyv1.PodDisruptionBudget) error {
	return objectEvent(h, h.pdbKind, stores.OpDelete, pdb, nil)
}

// AddOwner implements ClusterEventsHandler.
func (h *Handler) AddOwner(owner *store.Owner) error {
	return objectEvent(h, h.ownerKind, stores.OpAdd, nil, owner)
}

// UpdateOwner implements ClusterEventsHandler.
func (h *Handler) UpdateOwner(oldOwner, newOwner *store.Owner) error {
	return objectEvent(h, h.ownerKind, stores.OpUpdate, oldOwner, newOwner)
}

// DeleteOwner implements ClusterEventsHandler.
func (h *Handler) DeleteOwner(owner *store.Owner) error {
	return objectEvent(h, h.ownerKind, stores.OpDelete, owner, nil)
}

// AddMovement implements ClusterEventsHandler.
func (h *Handler) AddMovement(m *v1alpha1.Movement) error {
	return objectEvent(h, h.movementKind, stores.OpAdd, nil, m)
}

// UpdateMovement implements ClusterEventsHandler.
func (h *Handler) UpdateMovement(oldM, newM *v1alpha1.Movement) error {
	return objectEvent(h, h.movementKind, stores.OpUpdate, oldM, newM)
}

// DeleteMovement implements ClusterEventsHandler.
func (h *Handler) DeleteMovement(m *v1alpha1.Movement) error {
	return objectEvent(h, h.movementKind, stores.OpDelete, m, nil)
}

// AddReservation implements ClusterEventsHandler.
func (h *Handler) AddReservation(r *v1alpha1.Reservation) error {
	return objectEvent(h, h.rsvKind, stores.OpAdd, nil, r)
}

// UpdateReservation implements ClusterEventsHandler.
func (h *Handler) UpdateReservation(oldR, newR *v1alpha1.Reservation) error {
	return objectEvent(h, h.rsvKind, stores.OpUpdate, oldR, newR)
}

// DeleteReservation implements ClusterEventsHandler.
func (h *Handler) DeleteReservation(r *v1alpha1.Reservation) error {
	return objectEvent(h, h.rsvKind, stores.OpDelete, r, nil)
}

// sample reports whether this event's store timings are observed.
func (h *Handler) sample() bool {
	h.events++
	return h.events%metrics.SampleEvery == 0
}
