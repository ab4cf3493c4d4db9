package reservationstore

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// HeldFrom returns, by node, the room the Reserved reservations (deleted pods' holds
// included) keep there that pod may not consume: every Reserved one but those MatchableFor
// returns. Resources.Pods counts one pod slot per reservation, the placeholder's. A node
// where nothing is held from the pod is absent. This is what a scheduler leaves out of a
// node's free room when it places pod; the reservations the pod may consume are room it
// may use.
func (s *Store) HeldFrom(pod *corev1.Pod) map[string]store.Resources {
	mine := map[types.NamespacedName]bool{}
	for _, v := range s.MatchableFor(pod) {
		mine[v.Key] = true
	}
	out := map[string]store.Resources{}
	for node, byKey := range s.byNode {
		for key, e := range byKey {
			if e.phase != v1alpha1.ReservationReserved || mine[key] {
				continue
			}
			held := out[node]
			held.Add(store.Reservation{Reservation: e.r}.Resources())
			held.Pods++
			out[node] = held
		}
	}
	return out
}
