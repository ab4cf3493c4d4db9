package reservationstore

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

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
// pod states of the same generation: the Reserved reservations pod may consume, best
// first (a walk of the snapshot's reservations).
func MatchableIn(snap *Snapshot, pod *corev1.Pod, podState func(types.NamespacedName) (store.PodStatus, bool)) []store.Reservation {
	if pod == nil || !qualifies(pod) {
		return nil
	}
	items := snap.Items()
	for _, v := range items {
		if v.match.linked && v.Owner != nil && ownerIs(v.Owner, pod) {
			return nil // consumed one
		}
	}
	node, landed, elsewhere := matchPlace(pod, podState)
	if elsewhere {
		return nil
	}
	var out []store.Reservation
	for _, v := range items {
		if v.Phase != v1alpha1.ReservationReserved || v.Node == "" || (node != "" && v.Node != node) {
			continue
		}
		if pod.Namespace != v.Key.Namespace || v.match.selector == nil || !v.match.selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if !landed.IsZero() && landed.Before(v.match.from) {
			continue
		}
		out = append(out, v.Reservation)
	}
	sort.Slice(out, func(i, j int) bool { return preferredView(out[i], out[j]) })
	return out
}

// HeldFromIn answers as Store.HeldFrom did when snap was updated: by node, the room the
// Reserved reservations pod may not consume keep, with one pod slot each.
func HeldFromIn(snap *Snapshot, pod *corev1.Pod, podState func(types.NamespacedName) (store.PodStatus, bool)) map[string]store.Resources {
	mine := map[types.NamespacedName]bool{}
	for _, v := range MatchableIn(snap, pod, podState) {
		mine[v.Key] = true
	}
	out := map[string]store.Resources{}
	for key, v := range snap.Items() {
		if v.Phase != v1alpha1.ReservationReserved || v.Node == "" || mine[key] {
			continue
		}
		held := out[v.Node]
		held.Add(v.Resources())
		held.Pods++
		out[v.Node] = held
	}
	return out
}

// preferredView reports whether a is preferred over b: the older, then by namespace/name.
func preferredView(a, b store.Reservation) bool {
	ta, tb := a.Reservation.CreationTimestamp.Time, b.Reservation.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Key.Namespace != b.Key.Namespace {
		return a.Key.Namespace < b.Key.Namespace
	}
	return a.Key.Name < b.Key.Name
}
