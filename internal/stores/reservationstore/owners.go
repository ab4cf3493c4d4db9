package reservationstore

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A hold only where a replacement is coming: the store decides from the deleted pod's
// controller, as that controller would.
//
//   - ReplicaSet: a replacement is coming while fewer of its pods have landed (bound to a
//     node, not terminal, not being deleted: what the ReplicaSet controller counts as
//     active, less the ones still waiting for a node, whose place the hold keeps) than its
//     spec.replicas.
//   - ReplicaSet of a Deployment: a Deployment's rollout keeps places (see rollouts.go). A
//     replacement is coming while the Deployment's newest ReplicaSet has fewer landed pods
//     than the Deployment's spec.replicas, whichever of its ReplicaSets the deleted pod
//     was of.
//   - StatefulSet: the replacement keeps the name and ordinal; it is coming while the
//     ordinal is below spec.replicas (a scale-down removes the highest ordinals).
//   - DaemonSet: the replacement is the one pod for the node; it is not coming if a live
//     pod of the DaemonSet is already on the node.
//   - Job: as a ReplicaSet, against the count of active pods the Job controller wants
//     (JobWantsActive: none once the Job is finished, finishing or suspended; else
//     min(parallelism, completions - succeeded), or parallelism until a pod succeeded when
//     completions is not set).
//
// Pods of another controller, or of one the owner feed has not brought (yet: a Job not
// seen yet or gone), keep the place as before (a hold until the TTL); so do the pods of an
// owner whose desired count is unknown (a Job another controller manages). The decision is
// made again when the owner changes (a scale change, a Job's succeeded count, its
// completion or suspension, a Deployment's new ReplicaSet) and, for a ReplicaSet or a Job,
// when the count of its landed pods does (of a Deployment's ReplicaSet: for the holds of
// every ReplicaSet of the Deployment): a hold or a replacement Reservation still Reserved whose owner is satisfied
// is released (released_scale_down), on every replica (it follows from objects every
// replica sees).

// ownerInfo is what the store keeps of a workload owner.
type ownerInfo struct {
	uid types.UID
	// value is its reserve-on-delete annotation ("" when none).
	value string
	// replicas is its desired count (nil: unknown, or a DaemonSet).
	replicas *int32
	// deployment is the Deployment that controls a ReplicaSet (nil when none), revision
	// the ReplicaSet's there.
	deployment *store.OwnerRef
	revision   int64
	// replicaSets are a Deployment's ReplicaSets the store knows: their revision by UID.
	replicaSets map[types.UID]int64
	// stub marks a Deployment known only from its ReplicaSets' controller references (not
	// fed yet, or gone before them): its desired count is unknown.
	stub bool
}

// replaced is what a hold, or the Reservation that took it over, keeps the place for: the
// deleted pod's name and its controller.
type replaced struct {
	pod   string
	owner store.OwnerKey
	uid   types.UID
}

// replacedOf reads it off a replacement Reservation (its owner reference and
// ReplacesPodAnnotation); ok is false for an ordinary reservation.
func replacedOf(r *v1alpha1.Reservation) (replaced, bool) {
	pod, ok := r.Annotations[v1alpha1.ReplacesPodAnnotation]
	if !ok || len(r.OwnerReferences) != 1 {
		return replaced{}, false
	}
	ref := r.OwnerReferences[0]
	return replaced{pod: pod, uid: ref.UID,
		owner: store.OwnerKey{Type: v1alpha1.OwnerType(ref.Kind), Namespace: r.Namespace, Name: ref.Name}}, true
}

// Reserve-on-delete results, the values of multicache_reserve_on_delete_total{result}.
const (
	resultHeld       = "held"
	resultNotNeeded  = "not_needed"
	resultReleased   = "released_scale_down"
	resultConsumed   = "consumed"
	resultExpired    = "expired"
	resultInvalid    = "invalid_annotation"
	resultCannotKeep = "cannot_keep"
)

func count(result string) { metrics.ReserveOnDeleteTotal.WithLabelValues(result).Inc() }

// AddOwner implements stores.OwnerHandler: the store keeps every ReplicaSet, StatefulSet,
// DaemonSet, Job and Deployment (its UID, annotation and desired count; a ReplicaSet's
// Deployment and revision), and decides again for the holds of its pods.
func (s *Store) AddOwner(o *store.Owner) {
	key := o.Key()
	switch o.Type {
	case v1alpha1.OwnerReplicaSet, v1alpha1.OwnerStatefulSet, v1alpha1.OwnerDaemonSet, v1alpha1.OwnerJob:
	case v1alpha1.OwnerDeployment:
		s.addDeployment(o)
		return
	default:
		if o.ReserveOnDelete == "" {
			delete(s.owners, key)
			return
		}
	}
	info := ownerInfo{uid: o.UID, value: o.ReserveOnDelete, replicas: o.Replicas}
	var left ownerInfo // the Deployment the ReplicaSet was of, if another
	moved := false
	if o.Type == v1alpha1.OwnerReplicaSet {
		if prev, ok := s.owners[key]; ok {
			left, moved = s.leaveDeployment(prev)
		}
		if c := o.Controller; c != nil && c.Key.Type == v1alpha1.OwnerDeployment {
			info.deployment, info.revision = c, o.Revision
			s.joinDeployment(info)
			moved = moved && !sameUID(left.uid, c.UID)
		}
	}
	s.owners[key] = info
	s.redecideFor(key, o.UID)
	if moved {
		s.redecideRollout(left)
	}
}

// UpdateOwner implements stores.OwnerHandler.
func (s *Store) UpdateOwner(_, o *store.Owner) { s.AddOwner(o) }

// DeleteOwner implements stores.OwnerHandler.
func (s *Store) DeleteOwner(o *store.Owner) {
	key := o.Key()
	prev, ok := s.owners[key]
	if !ok {
		return
	}
	switch o.Type {
	case v1alpha1.OwnerDeployment:
		s.deleteDeployment(key, prev)
	case v1alpha1.OwnerReplicaSet:
		delete(s.owners, key)
		if d, ok := s.leaveDeployment(prev); ok {
			s.redecideRollout(d) // the newest may have changed
		}
	default:
		delete(s.owners, key)
	}
}

// owner returns what the store keeps of the owner key names, if its UID is uid.
func (s *Store) owner(key store.OwnerKey, uid types.UID) (ownerInfo, bool) {
	o, ok := s.owners[key]
	if !ok || !sameUID(uid, o.uid) {
		return ownerInfo{}, false
	}
	return o, true
}

// satisfied reports whether the owner of the pod rep stands for has what it wants on node
// without a replacement (then no place is kept), and why, in a sentence for the log and
// the Reservation's Events. An owner that does not say (one the store does not know, or
// whose wanted count is unknown) is never satisfied and gives no reason.
func (s *Store) satisfied(rep replaced, node string) (bool, string) {
	o, ok := s.owner(rep.owner, rep.uid)
	if !ok {
		return false, ""
	}
	switch rep.owner.Type {
	case v1alpha1.OwnerReplicaSet, v1alpha1.OwnerJob:
		if o.deployment != nil {
			return s.rolledOut(o.deployment)
		}
		if o.replicas == nil {
			return false, ""
		}
		pods := map[v1alpha1.OwnerType]string{v1alpha1.OwnerReplicaSet: "pods", v1alpha1.OwnerJob: "active pods"}[rep.owner.Type]
		n, want := s.landed[rep.uid], *o.replicas
		return n >= want, fmt.Sprintf("%s %s wants %d %s and %d have landed", rep.owner.Type, rep.owner.Name, want, pods, n)
	case v1alpha1.OwnerStatefulSet:
		ord, ok := ordinal(rep.pod, rep.owner.Name)
		if o.replicas == nil || !ok {
			return false, ""
		}
		want := *o.replicas
		return int32(ord) >= want, fmt.Sprintf("StatefulSet %s wants %d pods; %s has ordinal %d", rep.owner.Name, want, rep.pod, ord)
	case v1alpha1.OwnerDaemonSet:
		if info, ok := s.h.GetNodeInfo(node); ok {
			for _, p := range info.Pods {
				if _, uid, owned := store.ControllerOwner(p); owned && uid == rep.uid && landedLive(p) {
					return true, fmt.Sprintf("DaemonSet %s already runs pod %s on node %s", rep.owner.Name, p.Name, node)
				}
			}
		}
		return false, fmt.Sprintf("DaemonSet %s runs no pod on node %s", rep.owner.Name, node)
	}
	return false, ""
}

// ordinal parses a StatefulSet pod's ordinal (<set>-<ordinal>).
func ordinal(pod, set string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// landedLive reports whether a pod counts toward its owner as landed: bound to a node,
// not terminal, not being deleted.
func landedLive(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil && !store.IsTerminal(pod)
}

// countLanded keeps the count of landed pods per ReplicaSet or Job UID across a pod event
// (old nil: the pod is new; pod nil: it is gone) and decides again for the owner's holds
// when it moved.
func (s *Store) countLanded(old, pod *corev1.Pod) {
	ou, ok1 := countedOwnerOf(old)
	nu, ok2 := countedOwnerOf(pod)
	if ok1 && ok2 && ou.UID == nu.UID {
		return
	}
	if ok1 {
		if s.landed[ou.UID]--; s.landed[ou.UID] <= 0 {
			delete(s.landed, ou.UID)
		}
		s.redecideFor(ou.Key, ou.UID)
	}
	if ok2 {
		s.landed[nu.UID]++
		s.redecideFor(nu.Key, nu.UID)
	}
}

// countedOwnerOf returns the ReplicaSet or Job that controls a landed, live pod (the
// owners decided by a count of landed pods).
func countedOwnerOf(pod *corev1.Pod) (store.OwnerRef, bool) {
	if pod == nil || !landedLive(pod) {
		return store.OwnerRef{}, false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || (ref.Kind != string(v1alpha1.OwnerReplicaSet) && ref.Kind != string(v1alpha1.OwnerJob)) {
		return store.OwnerRef{}, false
	}
	key := store.OwnerKey{Type: v1alpha1.OwnerType(ref.Kind), Namespace: pod.Namespace, Name: ref.Name}
	return store.OwnerRef{Key: key, UID: ref.UID}, true
}

// indexReplaced records e under the owner of the pod it keeps the place of.
func (s *Store) indexReplaced(e *entry) {
	rep, ok := replacedOf(e.r)
	if !ok || rep.uid == "" {
		return
	}
	addTo(s.byReplacedOwner, rep.uid, e.key, struct{}{})
}

// unindexReplaced forgets e in byReplacedOwner.
func (s *Store) unindexReplaced(e *entry) {
	if rep, ok := replacedOf(e.r); ok {
		removeFrom(s.byReplacedOwner, rep.uid, e.key)
	}
}

// redecide releases the Reserved holds and replacement Reservations of the owner uid's
// pods that the owner no longer needs.
func (s *Store) redecide(uid types.UID) {
	keys := s.byReplacedOwner[uid]
	if len(keys) == 0 {
		return
	}
	var release []*entry // collected first: releasing edits the index
	for key := range keys {
		if e, ok := s.rsvs.Get(key); ok && s.unwanted(e) {
			release = append(release, e)
		}
	}
	for _, e := range release {
		if !e.counted {
			count(resultReleased)
			e.counted = true
		}
		if e.provisional {
			s.dropHold(e)
			s.ObjectChanged(HoldKind, e.key)
			continue
		}
		s.expire(e, s.h.Clock().Now())
		s.changed(e)
	}
}

// unwanted reports whether e is a Reserved hold or replacement Reservation whose owner no
// longer wants the place kept, and then notes why in e.ended.
func (s *Store) unwanted(e *entry) bool {
	rep, ok := replacedOf(e.r)
	if !ok || e.phase != v1alpha1.ReservationReserved {
		return false
	}
	done, why := s.satisfied(rep, e.node)
	if done {
		e.ended = "released: " + why
	}
	return done
}

// settled counts the result of a hold, or of the Reservation that took it over, once:
// consumed when a pod matched it, expired when its TTL ran out.
func (s *Store) settled(e *entry) {
	if e.counted || e.replacesSince.IsZero() {
		return
	}
	switch e.phase {
	case v1alpha1.ReservationMatched:
		count(resultConsumed)
	case v1alpha1.ReservationExpired:
		count(resultExpired)
	default:
		return
	}
	e.counted = true
}
