package reservationstore

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a copy of every reservation's view and what matching it needs.
type Snapshot = store.MapSnapshot[types.NamespacedName, snapView]

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return store.NewMapSnapshot[types.NamespacedName, snapView](stores.ReservationStoreName)
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	store.Sync(s.rsvs, snap.(*Snapshot).Items(), since, func(_ snapView, e *entry) snapView { return s.snapView(e) }, nil)
}

// GetIn answers as Store.Get did when snap was updated.
func GetIn(snap *Snapshot, key types.NamespacedName) (store.Reservation, bool) {
	v, ok := snap.Get(key)
	return v.Reservation, ok
}

// OnNodeIn answers as Store.OnNode did when snap was updated: the Reserved and Matched
// reservations of a node, by key (a walk of the snapshot's reservations).
func OnNodeIn(snap *Snapshot, node string) []store.Reservation {
	out := []store.Reservation{}
	for _, v := range snap.Items() {
		if v.Node == node && (v.Phase == v1alpha1.ReservationReserved || v.Phase == v1alpha1.ReservationMatched) {
			out = append(out, v.Reservation)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}

// MatchableIn answers as Store.MatchableFor did when snap was updated, podState being the
// pod states of the same generation.
func MatchableIn(snap *Snapshot, pod *corev1.Pod, podState podStates) []store.Reservation {
	consumed := func() bool {
		for _, v := range snap.Items() {
			if v.match.linked && v.Owner != nil && sameRef(v.Owner, refOf(pod)) {
				return true
			}
		}
		return false
	}
	return matchable(pod, podState, consumed, reservedIn(snap))
}

// HeldFromIn answers as Store.HeldFrom did when snap was updated.
func HeldFromIn(snap *Snapshot, pod *corev1.Pod, podState podStates) map[string]store.Resources {
	return heldFrom(MatchableIn(snap, pod, podState), reservedIn(snap))
}

// reservedIn is Store.eachReserved for a snapshot (a walk of its reservations).
func reservedIn(snap *Snapshot) func(string, func(store.Reservation, matchInfo)) {
	return func(node string, yield func(store.Reservation, matchInfo)) {
		for _, v := range snap.Items() {
			if v.Phase == v1alpha1.ReservationReserved && v.Node != "" && (node == "" || v.Node == node) {
				yield(v.Reservation, v.match)
			}
		}
	}
}
