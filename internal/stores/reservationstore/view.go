package reservationstore

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// snapView is a reservation as a snapshot keeps it: its view and what MatchableIn needs
// to answer from the snapshot as MatchableFor does. (v.Reservation is the embedded view;
// v.Reservation.Reservation the API object.)
type snapView struct {
	store.Reservation
	match matchInfo
}

// matchInfo is the part of an entry a snapshot keeps to decide which pods may consume it.
type matchInfo struct {
	selector labels.Selector
	// from is the earliest landing time of a bound pod it accepts.
	from time.Time
	// linked is set while the owner counts as having consumed it (indexed in byOwner).
	linked bool
}

func (s *Store) view(e *entry) store.Reservation {
	v := store.Reservation{Key: e.key, Reservation: e.r, Phase: e.phase, Node: e.node, ReservedAt: e.reservedAt, ExpiresAt: e.expiresAt,
		Provisional: e.provisional, Why: e.why, AwaitingNode: e.awaiting}
	if e.ended != "" {
		v.Why = e.ended
	}
	if e.owner != nil {
		owner := *e.owner
		v.Owner = &owner
		v.OwnerAssumed = s.assumed(ownerKey(e.owner))
	}
	return v
}

// snapView builds what a snapshot keeps of e.
func (s *Store) snapView(e *entry) snapView {
	v := snapView{Reservation: s.view(e), match: matchInfo{selector: e.selector, from: e.from()}}
	if e.owner != nil {
		v.match.linked = slices.Contains(s.byOwner[ownerKey(e.owner)], e)
	}
	return v
}

// Get returns one reservation.
func (s *Store) Get(key types.NamespacedName) (store.Reservation, bool) {
	e, ok := s.rsvs.Get(key)
	if !ok {
		return store.Reservation{}, false
	}
	return s.view(e), true
}

// OnNode returns the Reserved and Matched reservations of a node, by key.
func (s *Store) OnNode(node string) []store.Reservation {
	out := make([]store.Reservation, 0, len(s.byNode[node]))
	for _, e := range s.byNode[node] {
		out = append(out, s.view(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}

// MatchableFor returns the Reserved reservations a pod may consume, best first (the
// oldest, then by namespace/name): for a pod the API has not bound yet (pending, or only
// assumed), every one that selects it, on the node its spec names or anywhere in its
// namespace when it names none, whatever its creation time; for a pod the API bound, those
// on its node created no later than it landed. A pod that consumed a reservation, or that
// is terminal or best-effort, may consume none.
func (s *Store) MatchableFor(pod *corev1.Pod) []store.Reservation {
	consumed := func() bool { _, c := s.consumedBy(pod); return c }
	return matchable(pod, s.h.GetPodState, consumed, s.eachReserved)
}

// HeldFrom returns, by node, the room the Reserved reservations (deleted pods' holds
// included) keep there that pod may not consume: every Reserved one but those MatchableFor
// returns. Resources.Pods counts one pod slot per reservation, the placeholder's. A node
// where nothing is held from the pod is absent. This is what a scheduler leaves out of a
// node's free room when it places pod; the reservations the pod may consume are room it
// may use.
func (s *Store) HeldFrom(pod *corev1.Pod) map[string]store.Resources {
	return heldFrom(s.MatchableFor(pod), s.eachReserved)
}

// eachReserved calls yield with the view and match info of every Reserved reservation on
// node (on every node when node is "").
func (s *Store) eachReserved(node string, yield func(store.Reservation, matchInfo)) {
	visit := func(byKey map[types.NamespacedName]*entry) {
		for _, e := range byKey {
			if e.phase == v1alpha1.ReservationReserved {
				yield(s.view(e), matchInfo{selector: e.selector, from: e.from()})
			}
		}
	}
	if node != "" {
		visit(s.byNode[node])
		return
	}
	for _, byKey := range s.byNode {
		visit(byKey)
	}
}

// matchable is MatchableFor's rule, for the live store and a snapshot alike: of the
// Reserved reservations reserved yields (on a node, or on every node for ""), those pod may
// consume, best first. consumed reports whether pod consumed one already.
func matchable(pod *corev1.Pod, podState podStates, consumed func() bool, reserved func(string, func(store.Reservation, matchInfo))) []store.Reservation {
	if pod == nil || !qualifies(pod) || consumed() {
		return nil
	}
	node, landed, elsewhere := matchPlace(pod, podState)
	if elsewhere {
		return nil
	}
	var out []store.Reservation
	reserved(node, func(v store.Reservation, m matchInfo) {
		if pod.Namespace == v.Key.Namespace && m.selector != nil && m.selector.Matches(labels.Set(pod.Labels)) &&
			(landed.IsZero() || !landed.Before(m.from)) {
			out = append(out, v)
		}
	})
	sort.Slice(out, func(i, j int) bool {
		return olderFirst(out[i].Reservation.CreationTimestamp.Time, out[i].Key, out[j].Reservation.CreationTimestamp.Time, out[j].Key)
	})
	return out
}

// heldFrom is HeldFrom's rule, for the live store and a snapshot alike: by node, the room
// of the Reserved reservations reserved yields but those in mine, one pod slot each.
func heldFrom(mine []store.Reservation, reserved func(string, func(store.Reservation, matchInfo))) map[string]store.Resources {
	skip := map[types.NamespacedName]bool{}
	for _, v := range mine {
		skip[v.Key] = true
	}
	out := map[string]store.Resources{}
	reserved("", func(v store.Reservation, _ matchInfo) {
		if !skip[v.Key] {
			held := out[v.Node]
			held.Add(v.Resources())
			held.Pods++
			out[v.Node] = held
		}
	})
	return out
}

// CountByPhase returns how many reservations are in each phase.
func (s *Store) CountByPhase() map[v1alpha1.ReservationPhase]int {
	out := map[v1alpha1.ReservationPhase]int{}
	s.rsvs.Range(func(_ types.NamespacedName, e *entry) bool {
		out[e.phase]++
		return true
	})
	return out
}

// Each calls fn with every reservation's view (holds included) until fn returns false.
func (s *Store) Each(fn func(store.Reservation) bool) {
	s.rsvs.Range(func(_ types.NamespacedName, e *entry) bool { return fn(s.view(e)) })
}

// podStates looks a pod's state up: the live store's, or a snapshot's of the same generation.
type podStates = func(types.NamespacedName) (store.PodStatus, bool)

// matchPlace is where a pod may consume a reservation: for a pod the API has not bound,
// the node its spec names ("" for anywhere) with no landing constraint (landed zero); for
// a pod the API bound, its node and the time it landed. elsewhere: the API bound it to
// another node than its spec names, and it may consume none.
func matchPlace(pod *corev1.Pod, podState podStates) (node string, landed time.Time, elsewhere bool) {
	node = pod.Spec.NodeName
	st, ok := podState(store.PodKey(pod))
	if !ok || st.APIPod == nil || st.APIPod.Spec.NodeName == "" ||
		(pod.UID != "" && st.APIPod.UID != "" && pod.UID != st.APIPod.UID) {
		return node, time.Time{}, false
	}
	if node != "" && node != st.APIPod.Spec.NodeName {
		return "", time.Time{}, true
	}
	return st.APIPod.Spec.NodeName, landedAt(st.APIPod), false
}
