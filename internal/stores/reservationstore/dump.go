package reservationstore

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// ReservationDump is the debug view of one reservation.
type ReservationDump struct {
	Phase      v1alpha1.ReservationPhase `json:"phase"`
	Node       string                    `json:"node"`
	Resources  corev1.ResourceList       `json:"resources"`
	Owner      string                    `json:"owner,omitempty"`
	ReservedAt *time.Time                `json:"reservedAt,omitempty"`
	ExpiresAt  *time.Time                `json:"expiresAt,omitempty"`
	// Hold marks a deleted pod's place no Reservation took over yet (reserve-on-delete).
	Hold bool `json:"hold,omitempty"`
}

// Dump implements stores.Store: ReservationDump by namespace/name.
func (s *Store) Dump() any {
	out := map[string]ReservationDump{}
	s.rsvs.Range(func(key types.NamespacedName, e *entry) bool {
		d := ReservationDump{Phase: e.phase, Node: e.node, Resources: e.r.Spec.Resources, Hold: e.provisional}
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
// entries; a pod holds at most one match the cache made, and none besides a recorded one;
// no pod is recorded on two Matched reservations, and a status that records an owner is
// indexed under it; every node is settled (the landing rule would change nothing); the
// heap is a heap.
func (s *Store) CheckInvariants() []error {
	var errs []error
	bad := func(key types.NamespacedName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("reservation %s: "+format, append([]any{key}, args...)...))
	}
	if err := s.Untaken(); err != nil {
		errs = append(errs, err)
	}
	// listed counts how often index lists each entry; every one it lists must be the store's,
	// under the key of the reference ref gives.
	listed := func(name string, index map[types.NamespacedName][]*entry, ref func(*entry) *v1alpha1.PodReference) map[*entry]int {
		n := map[*entry]int{}
		for podKey, list := range index {
			for _, e := range list {
				n[e]++
				if cur, ok := s.rsvs.Get(e.key); !ok || cur != e || ref(e) == nil || ownerKey(ref(e)) != podKey {
					bad(e.key, "%s index says %s (the store's entry: %v)", name, podKey, ok && cur == e)
				}
			}
		}
		return n
	}
	linked := listed("owner", s.byOwner, func(e *entry) *v1alpha1.PodReference { return e.owner })
	indexed := listed("recording", s.byRecording, func(e *entry) *v1alpha1.PodReference { return e.recording })
	recordedBy := map[types.NamespacedName][]*entry{}
	s.rsvs.Range(func(key types.NamespacedName, e *entry) bool {
		if (e.how == held || e.how == derived) && e.owner != nil {
			for _, other := range s.byOwner[ownerKey(e.owner)] {
				if other != e && sameRef(e.owner, other.owner) {
					bad(key, "owner %s (%s) also holds %s (%s)", ownerKey(e.owner), e.how, other.key, other.how)
				}
			}
		}
		if n := indexed[e]; (e.recording != nil) != (n == 1) || n > 1 {
			bad(key, "records %v, in the recording index %d times", e.recording, n)
		}
		if isRecorded(e.r) && (e.recording == nil || !sameRef(e.recording, e.r.Status.CurrentOwner)) {
			bad(key, "status records %s, indexed under %v", ownerKey(e.r.Status.CurrentOwner), e.recording)
		}
		if e.how == recorded {
			for _, other := range recordedBy[ownerKey(e.owner)] {
				if sameRef(e.owner, other.owner) {
					bad(key, "owner %s also recorded on %s", ownerKey(e.owner), other.key)
				}
			}
			recordedBy[ownerKey(e.owner)] = append(recordedBy[ownerKey(e.owner)], e)
		}
		reserved := e.phase == v1alpha1.ReservationReserved
		if reserved != (e.placeholder != nil) || (reserved || e.provisional) != (e.heapIndex >= 0) {
			bad(key, "phase %s, placeholder %v, in heap %v", e.phase, e.placeholder != nil, e.heapIndex >= 0)
		}
		if e.placeholder != nil && !s.placeholderCharged(e) {
			bad(key, "placeholder not charged on node %q", e.node)
		}
		_, indexed := s.byNode[e.node][key]
		if onNode := reserved || e.phase == v1alpha1.ReservationMatched; onNode != indexed {
			bad(key, "phase %s but node index %v", e.phase, indexed)
		}
		if rep, ok := replacedOf(e.r); ok && reserved && rep.owner.Type != v1alpha1.OwnerDaemonSet {
			// A ReplicaSet's, StatefulSet's or Job's is decided again on every change of what it
			// depends on (a DaemonSet's replacement consumes the hold instead).
			if done, why := s.satisfied(rep, e.node); done {
				bad(key, "keeps a place its owner does not want: %s", why)
			}
		}
		if e.awaiting != "" && (e.phase != v1alpha1.ReservationPending || s.nodeExists(e.awaiting)) {
			bad(key, "%s, awaiting node %q (known %v)", e.phase, e.awaiting, s.nodeExists(e.awaiting))
		}
		matched := e.phase == v1alpha1.ReservationMatched
		if matched != (e.owner != nil) || matched != (e.how != unmatched) {
			bad(key, "phase %s, owner %v, match %q", e.phase, e.owner, e.how)
		}
		if n := linked[e]; n > 1 || (n == 0 && (e.how == held || e.how == derived)) {
			bad(key, "%s match linked %d times in the owner index", e.how, n)
		}
		if e.phase == v1alpha1.ReservationPending && e.node != "" {
			bad(key, "pending on node %q", e.node)
		}
		if rep, ok := replacedOf(e.r); ok && rep.uid != "" {
			if _, filed := s.byReplacedOwner[rep.uid][key]; !filed {
				bad(key, "keeps the place of a pod of owner %s, not filed under it", rep.uid)
			}
		}
		return true
	})
	for uid, keys := range s.byReplacedOwner {
		for key := range keys {
			var rep replaced
			if e, ok := s.rsvs.Get(key); ok {
				rep, _ = replacedOf(e.r)
			}
			if rep.uid != uid {
				bad(key, "filed under replaced owner %s; keeps the place of a pod of owner %q", uid, rep.uid)
			}
		}
	}
	for node := range s.byNode {
		open, want := s.assignment(node)
		for _, e := range open {
			if pod := want[e]; !settledAs(e, pod) {
				to := "no pod"
				if pod != nil {
					to = store.PodKey(pod).String()
				}
				bad(e.key, "%s by %v, but the landing rule gives it to %s on %s", e.phase, e.owner, to, node)
			}
		}
	}
	for _, hp := range []*deadlineHeap{&s.deadlines, &s.holdDeadlines} {
		for i, d := range *hp {
			if d.entry.heapIndex != i || s.heapOf(d.entry) != hp {
				bad(d.entry.key, "heap index %d at position %d (hold %v)", d.entry.heapIndex, i, d.entry.provisional)
			}
			if !d.at.Equal(d.entry.expiresAt) {
				bad(d.entry.key, "heap deadline %v, reservation expires at %v", d.at, d.entry.expiresAt)
			}
			if i > 0 && hp.Less(i, (i-1)/2) {
				bad(d.entry.key, "heap order broken at %d", i)
			}
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
		if key, _ := store.PlaceholderOf(p); key == e.key {
			return true
		}
	}
	return false
}
