package reservationstore

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// ReservationDump is the debug view of one reservation.
type ReservationDump struct {
	Phase      v1alpha1.ReservationPhase `json:"phase"`
	Node       string                    `json:"node"`
	Resources  corev1.ResourceList       `json:"resources"`
	Owner      string                    `json:"owner,omitempty"`
	ReservedAt *time.Time                `json:"reservedAt,omitempty"`
	ExpiresAt  *time.Time                `json:"expiresAt,omitempty"`
}

// Dump implements stores.Store: ReservationDump by namespace/name.
func (s *Store) Dump() any {
	out := map[string]ReservationDump{}
	s.rsvs.Range(func(key types.NamespacedName, e *entry) bool {
		d := ReservationDump{Phase: e.phase, Node: e.node, Resources: e.r.Spec.Resources}
		if e.owner != nil {
			d.Owner = ownerKey(e.owner).String()
		}
		if !e.reservedAt.IsZero() {
			t := e.reservedAt
			d.ReservedAt = &t
		}
		if !e.expiresAt.IsZero() {
			t := e.expiresAt
			d.ExpiresAt = &t
		}
		out[key.String()] = d
		return true
	})
	return out
}

// CheckInvariants implements stores.Store: a reservation is Reserved exactly when its
// placeholder is charged on its node and its deadline is in the heap; Matched ones have an
// owner and no placeholder; Pending ones no node; the node and owner indexes agree with the
// entries; the heap is a heap.
func (s *Store) CheckInvariants() []error {
	var errs []error
	bad := func(key types.NamespacedName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("reservation %s: "+format, append([]any{key}, args...)...))
	}
	s.rsvs.Range(func(key types.NamespacedName, e *entry) bool {
		reserved := e.phase == v1alpha1.ReservationReserved
		if reserved != (e.placeholder != nil) || reserved != (e.heapIndex >= 0) {
			bad(key, "phase %s, placeholder %v, in heap %v", e.phase, e.placeholder != nil, e.heapIndex >= 0)
		}
		if e.placeholder != nil && !s.placeholderCharged(e) {
			bad(key, "placeholder not charged on node %q", e.node)
		}
		_, indexed := s.byNode[e.node][key]
		if onNode := reserved || e.phase == v1alpha1.ReservationMatched; onNode != indexed {
			bad(key, "phase %s but node index %v", e.phase, indexed)
		}
		switch e.phase {
		case v1alpha1.ReservationMatched:
			if e.owner == nil {
				bad(key, "matched without an owner")
			}
		case v1alpha1.ReservationPending:
			if e.node != "" {
				bad(key, "pending on node %q", e.node)
			}
		}
		if e.owner != nil && e.phase != v1alpha1.ReservationMatched {
			bad(key, "owner %s in phase %s", ownerKey(e.owner), e.phase)
		}
		return true
	})
	for podKey, e := range s.byOwner {
		if e.owner == nil || ownerKey(e.owner) != podKey || e.phase != v1alpha1.ReservationMatched {
			bad(e.key, "owner index says %s", podKey)
		}
		if cur, ok := s.rsvs.Get(e.key); !ok || cur != e {
			bad(e.key, "owner index points at a reservation that is gone")
		}
	}
	for i, d := range s.deadlines {
		if d.entry.heapIndex != i {
			bad(d.entry.key, "heap index %d at position %d", d.entry.heapIndex, i)
		}
		if !d.at.Equal(d.entry.expiresAt) {
			bad(d.entry.key, "heap deadline %v, reservation expires at %v", d.at, d.entry.expiresAt)
		}
		if i > 0 && s.deadlines.Less(i, (i-1)/2) {
			bad(d.entry.key, "heap order broken at %d", i)
		}
	}
	return errs
}

// placeholderCharged reports whether the NodeStore holds the reservation's placeholder.
func (s *Store) placeholderCharged(e *entry) bool {
	info, ok := s.h.GetNodeInfo(e.node)
	if !ok {
		return false
	}
	for _, p := range info.Placeholders {
		if key, _ := stores.PlaceholderOf(p); key == e.key {
			return true
		}
	}
	return false
}
