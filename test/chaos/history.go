package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The end-of-run checks over every version of every Reservation and PodGroup the recorder
// saw: no status is ever written that contradicts where the object ends or what the API
// held when it was written.

// lagGrace is how long a pod must have been placed before a status that ignores it counts
// as false (the cache learns of the API's changes with a short delay).
const lagGrace = 3 * time.Second

// checkReservationHistory checks every reservation's versions: the phase only moves
// forward (Pending, Reserved, then Matched or Expired, which are final); a Matched owner
// never changes and is a pod the reservation selects, which the API had put on its node
// after the reservation was created; reservedAt never changes once written; expiresAt is
// reservedAt plus the TTL, and Expired is not written before it; and no pod ever holds
// two live Matched reservations.
func checkReservationHistory(hist *History, defaultTTL time.Duration, by func(rv int64) string, fail func(check, format string, args ...any)) (checked, writes int) {
	type event struct {
		h *RsvHistory
		v RsvRec
	}
	var all []event
	for _, h := range hist.Rsvs {
		checked++
		var prev *RsvRec
		var owner types.UID
		var reservedAt *time.Time
		for i := range h.Versions {
			v := h.Versions[i]
			all = append(all, event{h, v})
			if v.Deleted {
				continue
			}
			st := v.Status
			if prev != nil && !statusEqual(prev.Status, st) {
				writes++
			}
			if prev != nil {
				from, to := prev.Status.Phase, st.Phase
				if !phaseMayFollow(from, to) {
					also := ""
					if b := st.ReservedAt; reservedAt != nil && b != nil && !reservedAt.Equal(b.Time) {
						also = fmt.Sprintf(" with another reservedAt (%s, first written %s)", b.Format(time.TimeOnly), reservedAt.Format(time.TimeOnly))
					}
					fail("false-status", "reservation %s: status %s written after %s%s (revision %d)%s; the %s before it:%s",
						h.Key, orNone(to), from, also, v.RV, by(v.RV), from, by(prev.RV))
				}
			}
			if st.Phase == v1alpha1.ReservationMatched {
				if st.CurrentOwner == nil {
					fail("false-status", "reservation %s: Matched without an owner (revision %d)%s", h.Key, v.RV, by(v.RV))
				} else {
					if owner != "" && st.CurrentOwner.UID != owner {
						fail("false-status", "reservation %s: owner changed from %s to %s/%s (revision %d)%s", h.Key, owner,
							st.CurrentOwner.Name, st.CurrentOwner.UID, v.RV, by(v.RV))
					}
					owner = st.CurrentOwner.UID
					if msg := ownerProblem(hist, h, st.CurrentOwner, v.RV); msg != "" {
						fail("false-status", "reservation %s: Matched by %s/%s, %s (revision %d)%s", h.Key,
							st.CurrentOwner.Namespace, st.CurrentOwner.Name, msg, v.RV, by(v.RV))
					}
				}
			}
			// reservedAt is set once, by the first status that has it: a later write with
			// another one moved it (writing the first one back is no new harm).
			if st.ReservedAt != nil {
				t := st.ReservedAt.Time
				if reservedAt == nil {
					reservedAt = &t
				} else if !reservedAt.Equal(t) && (prev.Status.ReservedAt == nil || !prev.Status.ReservedAt.Equal(st.ReservedAt)) {
					fail("false-status", "reservation %s: reservedAt moved from %s (first written) to %s (revision %d)%s", h.Key,
						reservedAt.Format(time.TimeOnly), t.Format(time.TimeOnly), v.RV, by(v.RV))
				}
			} else if reservedAt != nil && st.Phase != "" && st.Phase != v1alpha1.ReservationPending {
				fail("false-status", "reservation %s: %s written without reservedAt (revision %d)%s", h.Key, st.Phase, v.RV, by(v.RV))
			}
			if st.ExpiresAt != nil && st.ReservedAt != nil {
				ttl := defaultTTL
				if h.TTL != nil {
					ttl = time.Duration(*h.TTL) * time.Second
				}
				if want := st.ReservedAt.Add(ttl); !st.ExpiresAt.Time.Equal(want) {
					fail("false-status", "reservation %s: expiresAt %s, reservedAt + TTL is %s (revision %d)%s", h.Key,
						st.ExpiresAt.Format(time.TimeOnly), want.Format(time.TimeOnly), v.RV, by(v.RV))
				}
				if st.Phase == v1alpha1.ReservationExpired && !v.Relist && v.At.Add(100*time.Millisecond).Before(st.ExpiresAt.Time) {
					fail("false-status", "reservation %s: written Expired at %s, before its expiry %s (revision %d)%s", h.Key,
						v.At.Format("15:04:05.000"), st.ExpiresAt.Format(time.TimeOnly), v.RV, by(v.RV))
				}
			}
			p := v
			prev = &p
		}
	}
	// No pod holds two live Matched reservations at any revision.
	sort.Slice(all, func(i, j int) bool { return all[i].v.RV < all[j].v.RV })
	holder := map[types.UID]types.UID{} // reservation -> owner
	held := map[types.UID]map[types.UID]bool{}
	reported := map[string]bool{}
	for _, e := range all {
		if old, ok := holder[e.h.UID]; ok {
			delete(held[old], e.h.UID)
			delete(holder, e.h.UID)
		}
		st := e.v.Status
		if e.v.Deleted || st.Phase != v1alpha1.ReservationMatched || st.CurrentOwner == nil {
			continue
		}
		o := st.CurrentOwner.UID
		holder[e.h.UID] = o
		if held[o] == nil {
			held[o] = map[types.UID]bool{}
		}
		held[o][e.h.UID] = true
		if len(held[o]) > 1 {
			var keys []string
			for r := range held[o] {
				keys = append(keys, hist.Rsvs[r].Key)
			}
			sort.Strings(keys)
			id := strings.Join(keys, ",")
			if !reported[id] {
				reported[id] = true
				fail("double-consumption", "pod %s/%s holds %d Matched reservations at revision %d: %v%s",
					st.CurrentOwner.Namespace, st.CurrentOwner.Name, len(keys), e.v.RV, keys, by(e.v.RV))
			}
		}
	}
	return checked, writes
}

// phaseMayFollow reports whether a reservation's status may go from one phase to another.
func phaseMayFollow(from, to v1alpha1.ReservationPhase) bool {
	switch from {
	case "":
		return true
	case v1alpha1.ReservationPending:
		return to != ""
	case v1alpha1.ReservationReserved:
		return to == v1alpha1.ReservationReserved || to == v1alpha1.ReservationMatched || to == v1alpha1.ReservationExpired
	default: // Matched and Expired are final
		return to == from
	}
}

// ownerProblem says what is wrong with a Matched reservation's owner at revision rv, or "".
func ownerProblem(hist *History, h *RsvHistory, owner *v1alpha1.PodReference, rv int64) string {
	versions := hist.Pods[owner.UID]
	if len(versions) == 0 {
		return "a pod the API never had"
	}
	p, live := hist.PodAt(owner.UID, rv)
	if !live && versions[0].Relist {
		// First seen at a relist: it may have existed before; judge the first version.
		p, live = versions[0], true
	}
	if !live {
		// Deleted before the write (the match is spent): judge its last version.
		for i := len(versions) - 1; i >= 0; i-- {
			if !versions[i].Deleted {
				p = versions[i]
				break
			}
		}
		if p.RV > rv || p.RV == 0 {
			return "a pod the API did not have yet"
		}
	}
	ns, _, _ := strings.Cut(h.Key, "/")
	switch {
	case p.Key != owner.Namespace+"/"+owner.Name || !strings.HasPrefix(p.Key, ns+"/"):
		return fmt.Sprintf("but that UID is pod %s", p.Key)
	case p.Node == "":
		return "a pod the API had not bound"
	case p.Node != h.Node:
		return fmt.Sprintf("a pod on node %s, not %s", p.Node, h.Node)
	case h.Selector == nil || !h.Selector.Matches(labels.Set(p.Labels)):
		return "a pod the reservation does not select"
	case p.Landed.Truncate(time.Second).Before(h.Since.Truncate(time.Second)):
		return fmt.Sprintf("a pod that landed (%s) before the reservation was created (%s) or the pod it replaces was deleted",
			p.Landed.Format(time.TimeOnly), h.Since.Format(time.TimeOnly))
	}
	return ""
}

// checkGroupHistory: a group is never written Timeout while the API held minMember placed
// members (placed for lagGrace at least).
func checkGroupHistory(hist *History, by func(rv int64) string, fail func(check, format string, args ...any)) (checked int) {
	members := map[string][]types.UID{} // group key -> member pod UIDs
	for uid, vs := range hist.Pods {
		for _, v := range vs {
			if g := v.Labels[v1alpha1.PodGroupLabel]; g != "" {
				ns, _, _ := strings.Cut(v.Key, "/")
				members[ns+"/"+g] = append(members[ns+"/"+g], uid)
				break
			}
		}
	}
	for _, h := range hist.Groups {
		checked++
		for _, v := range h.Versions {
			if v.Deleted || v.Status.Phase != v1alpha1.PodGroupTimeout {
				continue
			}
			placed := 0
			for _, uid := range members[h.Key] {
				p, live := hist.PodAt(uid, v.RV)
				if !live || !p.Placed() {
					continue
				}
				if since := placedSince(hist.Pods[uid], v.RV); !since.IsZero() && since.Add(lagGrace).Before(v.At) {
					placed++
				}
			}
			if placed >= int(h.MinMember) {
				fail("false-status", "pod group %s: written Timeout (revision %d) while %d members (minMember %d) had been placed for %v%s",
					h.Key, v.RV, placed, h.MinMember, lagGrace, by(v.RV))
			}
		}
	}
	return checked
}

// placedSince returns when a pod's current stretch of being placed (up to rv) began.
func placedSince(vs []PodRec, rv int64) time.Time {
	var since time.Time
	for _, v := range vs {
		if v.RV > rv {
			break
		}
		switch {
		case !v.Placed():
			since = time.Time{}
		case since.IsZero():
			since = v.At
		}
	}
	return since
}

// checkExpectations holds every object to what the workload meant by it, judged on the last
// version the recorder saw.
func checkExpectations(hist *History, ns string, rsvIntents map[string]RsvIntent, groupIntents map[string]GroupIntent,
	end time.Time, fail func(check, format string, args ...any)) (checked int) {
	last := map[string]*RsvHistory{}
	for _, h := range hist.Rsvs {
		if cur, ok := last[h.Key]; !ok || h.Versions[0].RV > cur.Versions[0].RV {
			last[h.Key] = h
		}
	}
	final := func(name string) (v1alpha1.ReservationStatus, bool, []RsvRec) {
		h, ok := last[ns+"/"+name]
		if !ok {
			return v1alpha1.ReservationStatus{}, false, nil
		}
		v := h.Versions[len(h.Versions)-1]
		return v.Status, !v.Deleted, h.Versions
	}
	ever := func(vs []RsvRec, phase v1alpha1.ReservationPhase) bool {
		for _, v := range vs {
			if !v.Deleted && v.Status.Phase == phase {
				return true
			}
		}
		return false
	}
	for name, in := range rsvIntents {
		if in.Abandoned {
			continue
		}
		checked++
		st, live, vs := final(name)
		switch in.Class {
		case "expire", "burst":
			if ever(vs, v1alpha1.ReservationMatched) {
				fail("expectation", "reservation %s (%s, selects nobody) was written Matched", name, in.Class)
			}
			due := in.Created.Add(time.Duration(in.TTL)*time.Second + judgedAfter)
			// Its TTL starts when it is placed: one whose node is gone (an extra node deleted
			// before it was placed there) awaits its node (below).
			if live && !in.Deleted && end.After(due) && st.Phase != v1alpha1.ReservationExpired && !awaitsNode(st) {
				fail("expectation", "reservation %s (%s, TTL %ds, created %s) ends %s, want Expired", name, in.Class, in.TTL,
					in.Created.Format(time.TimeOnly), orNone(st.Phase))
			}
		case "match":
			if ever(vs, v1alpha1.ReservationExpired) {
				fail("expectation", "reservation %s (waits for pod %s, TTL 1 day) was written Expired", name, in.Target)
			}
			if in.Target == "" || in.Deleted || !live {
				continue
			}
			// Its node deleted before it was placed there, it awaits its node, as an expiring
			// one does (above): its pod, bound to that node's name, has no node to be
			// charged on.
			if in.NodeDeleted && awaitsNode(st) {
				continue
			}
			if st.Phase != v1alpha1.ReservationMatched || st.CurrentOwner == nil || st.CurrentOwner.Name != in.Target {
				pod, _ := hist.LastPod(ns + "/" + in.Target)
				fail("expectation", "reservation %s (created %s on %s) ends %s (owner %s), want Matched by %s; the pod: %s",
					name, in.Created.Format(time.TimeOnly), in.Node, orNone(st.Phase), ownerName(st), in.Target, pod)
			}
		case "base", "pending":
			if ever(vs, v1alpha1.ReservationMatched) || ever(vs, v1alpha1.ReservationExpired) {
				fail("expectation", "reservation %s (%s: selects nobody, TTL 1 day) was written Matched or Expired", name, in.Class)
			}
			// A reservation whose node is gone (an extra node deleted before the reservation
			// was placed there) awaits its node: nothing is charged on a node that does not
			// exist.
			if live && !in.Deleted && in.Node != "" && st.Phase != v1alpha1.ReservationReserved && !awaitsNode(st) {
				fail("expectation", "reservation %s (%s on %s) ends %s, want Reserved", name, in.Class, in.Node, orNone(st.Phase))
			}
		case "contend":
			if in.Target == "" || in.Deleted || !live || in.Name > in.Peer {
				continue // judged once per pair, from the first
			}
			pst, plive, _ := final(in.Peer)
			peer := rsvIntents[in.Peer]
			if !plive || peer.Deleted {
				continue
			}
			// Their node deleted before they were placed there, both await it, as a "match"
			// reservation does (above), and neither can be Matched.
			if in.NodeDeleted && awaitsNode(st) && awaitsNode(pst) {
				continue
			}
			matched := 0
			for _, s := range []v1alpha1.ReservationStatus{st, pst} {
				if s.Phase == v1alpha1.ReservationMatched {
					matched++
				}
			}
			if matched != 1 {
				fail("expectation", "contended reservations %s and %s (created %s on %s, node deleted by the workload: %t) end %s (%s) and %s (%s); want exactly one Matched by %s",
					name, in.Peer, in.Created.Format(time.TimeOnly), in.Node, in.NodeDeleted,
					orNone(st.Phase), reservedWhy(st), orNone(pst.Phase), reservedWhy(pst), in.Target)
			}
		}
	}
	lastGroup := map[string]*GroupHistory{}
	for _, h := range hist.Groups {
		if cur, ok := lastGroup[h.Key]; !ok || h.Versions[0].RV > cur.Versions[0].RV {
			lastGroup[h.Key] = h
		}
	}
	for name, in := range groupIntents {
		h, ok := lastGroup[ns+"/"+name]
		if !ok || in.Abandoned {
			continue
		}
		checked++
		v := h.Versions[len(h.Versions)-1]
		switch in.Class {
		case "runs":
			for _, x := range h.Versions {
				switch x.Status.Phase {
				case v1alpha1.PodGroupTimeout, v1alpha1.PodGroupFailed, v1alpha1.PodGroupFinished:
					fail("expectation", "pod group %s (all %d members created at once, running; timeout 1 day) was written %s (revision %d)",
						name, len(in.Members), x.Status.Phase, x.RV)
				}
			}
			if !v.Deleted && !in.Deleted && (v.Status.Phase != v1alpha1.PodGroupRunning || int(v.Status.Running) != len(in.Members)) {
				fail("expectation", "pod group %s ends %s with %d running, want Running with %d", name, orNone(v.Status.Phase),
					v.Status.Running, len(in.Members))
			}
		case "starves":
			for _, x := range h.Versions {
				if x.Status.Phase == v1alpha1.PodGroupRunning || x.Status.Phase == v1alpha1.PodGroupScheduled {
					fail("expectation", "pod group %s (1 member of 3) was written %s (revision %d)", name, x.Status.Phase, x.RV)
				}
			}
			due := h.Created.Add(time.Duration(in.Timeout)*time.Second + judgedAfter)
			if !v.Deleted && !in.Deleted && end.After(due) && v.Status.Phase != v1alpha1.PodGroupTimeout {
				fail("expectation", "pod group %s (1 member of 3, timeout %ds) ends %s, want Timeout", name, in.Timeout, orNone(v.Status.Phase))
			}
		}
	}
	return checked
}

func statusEqual(a, b v1alpha1.ReservationStatus) bool {
	return a.Phase == b.Phase && ownerName(a) == ownerName(b) && a.ReservedAt.Equal(b.ReservedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

func ownerName(s v1alpha1.ReservationStatus) string {
	if s.CurrentOwner == nil {
		return ""
	}
	return s.CurrentOwner.Name
}

func orNone[T ~string](s T) string {
	if s == "" {
		return "(none)"
	}
	return string(s)
}

// awaitsNode reports whether a reservation's status says it awaits a node that does not
// exist: Pending, Reserved=False NodeNotFound.
func awaitsNode(st v1alpha1.ReservationStatus) bool {
	return st.Phase == v1alpha1.ReservationPending && reservedWhy(st) == "NodeNotFound"
}

// reservedWhy is the reason of a reservation's Reserved condition ("" without one).
func reservedWhy(st v1alpha1.ReservationStatus) string {
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ReservationConditionReserved); c != nil {
		return c.Reason
	}
	return ""
}

// judgedAfter is how long past its deadline (a reservation's TTL, a gang's timeout) the
// checks wait before they judge what the deadline should have done; the final wait lets
// every deadline reach it.
const judgedAfter = 5 * time.Second
