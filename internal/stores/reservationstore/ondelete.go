package reservationstore

import (
	"container/heap"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Reserve-on-delete (the seed's ReservationTTL): a pod annotated
// v1alpha1.ReserveOnDeleteAnnotation keeps its place on its node when the API reports it
// gone. The store puts a hold in its place at once, under the same lock as the delete: a
// provisional reservation under the name the leader will create the replacement
// Reservation with (ReplacementName), charged on the node through a placeholder, with the
// deleted pod's requests and a selector of the pods that replace it, Reserved from the
// deletion for CacheHandler.ReservationTTL. Pods consume it as they consume any reservation
// (those that landed since the deletion). When the leader's Reservation arrives it takes
// the hold over as it stands (same placeholder charge, same match, same deadline): no gap,
// nothing counted twice. A hold no Reservation took over is dropped at its deadline,
// whatever its phase. Holds are not API objects: only the Reservation survives a restart.

// HoldKind is the kind under which the store reports a new hold as a changed object (its
// Outbox): the leader's replacement controller creates its Reservation.
const HoldKind stores.Kind = "ReservationHold"

// maxTTLSeconds is the largest spec.ttlSeconds the Reservation CRD accepts (30 days).
const maxTTLSeconds = 30 * 24 * 3600

var (
	// ErrInvalidReserveOnDelete: a reserve-on-delete annotation that is not a boolean.
	ErrInvalidReserveOnDelete = errors.New("invalid " + v1alpha1.ReserveOnDeleteAnnotation + " annotation")
	// ErrCannotKeepPlace: an annotated pod whose place cannot be kept.
	ErrCannotKeepPlace = errors.New("cannot keep the deleted pod's place")
)

// replacementLabelsDropped are the labels a pod's controller sets per revision: the
// replacement a rolling restart creates carries other values, so the selector leaves them
// out. Per-pod identities (statefulset.kubernetes.io/pod-name) stay: a StatefulSet pod's
// place is for the pod of the same ordinal.
var replacementLabelsDropped = []string{appsPodTemplateHash, appsControllerRevisionHash, appsDaemonSetTemplateGeneration}

const (
	appsPodTemplateHash = "pod-template-hash"
	// appsDaemonSetTemplateGeneration is bumped by a DaemonSet with every template change:
	// the pod replacing one in a rolling update carries the next value.
	appsDaemonSetTemplateGeneration = "pod-template-generation"
	appsControllerRevisionHash      = "controller-revision-hash"
)

// PodGone is the API reporting that pod (the copy the cache was charged with) is gone, or
// that the kubelet ended it because it was deleted (a terminal phase with a
// deletionTimestamp: every deleted pod gets one before its removal, and a Job's pod stays
// terminal until its controller drops its finalizer; the handler calls PodGone at that
// update, when the node stops charging the pod, and its removal after finds a terminal pod,
// which keeps nothing); next is the pod of the same name the API holds instead
// (recreated), nil when none. If
// the pod asks for it (see keepsPlace), was charged on a node and its controller wants a
// replacement (see owners.go), its place is kept: a hold is placed there now and the
// leader is told to create its Reservation. It returns whether a hold was placed, and an
// error saying what to fix when the pod asked for one that cannot be (a bad annotation,
// nothing to hold, no labels to select a replacement by). The caller holds the lock and
// has released the pod from every store. Every result is counted
// (multicache_reserve_on_delete_total).
func (s *Store) PodGone(pod, next *corev1.Pod) (bool, error) {
	if pod.Spec.NodeName == "" || !qualifies(pod) {
		// Unbound, or its place is free already (a terminal pod: one the kubelet ended
		// because it was deleted was decided on when it turned terminal).
		return false, nil
	}
	want, err := s.keepsPlace(pod)
	if err != nil {
		count(resultInvalid)
		return false, err
	}
	if !want {
		return false, nil
	}
	if !s.nodeExists(pod.Spec.NodeName) {
		// Its node is gone (the pod GC ends the pods of a deleted node): no replacement
		// comes to a node that does not exist, and a hold there would await it with no TTL.
		count(resultCannotKeep)
		return false, fmt.Errorf("%w: pod %s/%s was on node %s, which no longer exists", ErrCannotKeepPlace, pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	now := s.h.Clock().Now()
	since := deletedAt(pod, now)
	if next != nil && !next.CreationTimestamp.IsZero() && next.CreationTimestamp.Before(&metav1.Time{Time: since}) {
		// The pod was gone before its namesake was created, whenever the feed noticed.
		since = next.CreationTimestamp.Time
	}
	r, err := Replacement(pod, s.h.ReservationTTL(), since)
	if err != nil {
		count(resultCannotKeep)
		return false, err
	}
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	if _, exists := s.rsvs.Get(key); exists {
		return false, nil // the Reservation came first (a relist): it holds the place
	}
	why := "its owner is not one multicache reads; the place is kept until the TTL"
	decided := false
	if rep, ok := replacedOf(r); ok {
		done, reason := s.satisfied(rep, pod.Spec.NodeName)
		if done {
			count(resultNotNeeded)
			return false, nil
		}
		if reason != "" { // the owner says whether a replacement came
			why, decided = reason, true
		}
	}
	if pod.DeletionTimestamp == nil && !decided {
		// An unknown deletion (learned late, forced) of a pod whose owner does not say
		// whether a replacement came: it is dated now, but a replacement may have landed
		// already; the place dates from the first one.
		since = s.firstReplacement(r, pod, since)
		r.CreationTimestamp = metav1.NewTime(since)
		r.Annotations[v1alpha1.ReplacesSinceAnnotation] = since.UTC().Format(time.RFC3339)
	}
	e := &entry{key: key, r: r, selector: selectorOf(r), replacesSince: since, provisional: true, heapIndex: -1, why: why}
	s.rsvs.Set(key, e)
	s.indexReplaced(e)
	s.place(e)
	s.changed(e)
	count(resultHeld)
	s.ObjectChanged(HoldKind, key)
	return true, nil
}

// firstReplacement dates an unknown deletion: the earliest landing, after the deleted pod
// landed and before since, of a pod on its node the hold would select that consumed
// nothing (a replacement that landed before the delete was learned); since when none.
func (s *Store) firstReplacement(r *v1alpha1.Reservation, pod *corev1.Pod, since time.Time) time.Time {
	info, ok := s.h.GetNodeInfo(pod.Spec.NodeName)
	if !ok {
		return since
	}
	probe := &entry{key: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, selector: selectorOf(r)}
	from, first := landedAt(pod), since
	for _, p := range info.Pods {
		if !eligible(p) || !s.fromAPI(p) || !probe.selects(p) {
			continue
		}
		if _, consumed := s.consumedBy(p); consumed {
			continue
		}
		if at := landedAt(p); at.After(from) && at.Before(first) {
			first = at
		}
	}
	return first.Truncate(time.Second)
}

// keepsPlace reports whether a deleted pod asks to keep its place: its own annotation, else
// its controller's (object, then pod template), else not.
func (s *Store) keepsPlace(pod *corev1.Pod) (bool, error) {
	if v, ok := pod.Annotations[v1alpha1.ReserveOnDeleteAnnotation]; ok {
		return parseReserveOnDelete(v, "pod "+store.PodKey(pod).String())
	}
	key, uid, ok := store.ControllerOwner(pod)
	if !ok {
		return false, nil
	}
	o, ok := s.owner(key, uid)
	if !ok || o.value == "" {
		return false, nil
	}
	return parseReserveOnDelete(o.value, "its owner "+key.String())
}

// parseReserveOnDelete parses an annotation value found on where.
func parseReserveOnDelete(v, where string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%w on %s: %q is not a boolean; set it to \"true\" to keep the pod's place on its node when it is deleted, or \"false\"",
			ErrInvalidReserveOnDelete, where, v)
	}
	return b, nil
}

// deletedAt is when the pod's deletion was asked for (its deletionTimestamp less the grace
// period), else now: in whole seconds, as the annotation and the status keep it.
func deletedAt(pod *corev1.Pod, now time.Time) time.Time {
	t := now
	if d := pod.DeletionTimestamp; d != nil {
		t = d.Time
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			t = t.Add(-time.Duration(*g) * time.Second)
		}
		if t.After(now) {
			t = now
		}
	}
	return t.Truncate(time.Second)
}

// Replacement returns the Reservation that keeps a deleted pod's place: named
// ReplacementName(pod), on the pod's node, holding what the pod requested (as the NodeStore
// charged it), for the pods of the namespace with the pod's labels less the per-revision
// ones, for ttl from since; owned by the pod's controller (garbage-collected with it). Its
// creationTimestamp is since; the leader clears it (and the UID) when it creates it.
func Replacement(pod *corev1.Pod, ttl time.Duration, since time.Time) (*v1alpha1.Reservation, error) {
	where := "pod " + store.PodKey(pod).String()
	req := store.PodRequests(pod)
	req.Pods = 0
	resources := req.ResourceList()
	if len(resources) == 0 {
		return nil, fmt.Errorf("%w: %s requests no resources, so there is nothing to hold; give its containers requests or remove the %s annotation",
			ErrCannotKeepPlace, where, v1alpha1.ReserveOnDeleteAnnotation)
	}
	selected := maps.Clone(pod.Labels)
	for _, k := range replacementLabelsDropped {
		delete(selected, k)
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("%w: %s has no labels a replacement could be selected by (an empty selector would hand its place to any pod of the namespace); label its pods",
			ErrCannotKeepPlace, where)
	}
	secs := int64(math.Ceil(ttl.Seconds()))
	secs = min(max(secs, 1), maxTTLSeconds)
	r := &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, Name: ReplacementName(pod), UID: "hold-" + pod.UID,
			CreationTimestamp: metav1.NewTime(since),
			Annotations: map[string]string{
				v1alpha1.ReplacesPodAnnotation:   pod.Name,
				v1alpha1.ReplacesSinceAnnotation: since.UTC().Format(time.RFC3339),
			},
		},
		Spec: v1alpha1.ReservationSpec{
			NodeName: pod.Spec.NodeName, Resources: resources,
			PodSelector: &metav1.LabelSelector{MatchLabels: selected}, TTLSeconds: &secs,
		},
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		// Not a controller reference: the Reservation is not one of the owner's pods.
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}}
	}
	return r, nil
}

// ReplacementName is the name of the Reservation that keeps a deleted pod's place: the
// pod's name and a hash of its UID (a StatefulSet pod comes back under the same name), at
// most 253 characters.
func ReplacementName(pod *corev1.Pod) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pod.UID))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	name := pod.Name
	if len(name) > 253-len(suffix) {
		name = strings.TrimRight(name[:253-len(suffix)], "-.")
	}
	return name + suffix
}

// replacesSince reads a Reservation's ReplacesSinceAnnotation (zero when absent or not an
// RFC 3339 time: then it is an ordinary reservation).
func replacesSince(r *v1alpha1.Reservation) time.Time {
	t, _ := time.Parse(time.RFC3339, r.Annotations[v1alpha1.ReplacesSinceAnnotation]) // zero on error
	return t
}

// takeOver lets the API's Reservation r take over the hold e of the same name, if it is the
// one the hold stands for (same node and resources, no status yet): e keeps its charge, its
// match and its deadline, and becomes an ordinary reservation. Otherwise the hold is
// dropped and r is added as any reservation is (the caller does that).
func (s *Store) takeOver(e *entry, r *v1alpha1.Reservation) bool {
	if r.Spec.NodeName != e.node || !equality.Semantic.DeepEqual(r.Spec.Resources, e.r.Spec.Resources) ||
		!equality.Semantic.DeepEqual(r.Status, v1alpha1.ReservationStatus{}) {
		s.dropHold(e)
		return false
	}
	if e.heapIndex >= 0 {
		s.unheap(e) // out of the holds' heap; a Reserved one goes into the reservations'
	}
	s.unindexReplaced(e)
	e.r, e.provisional = r, false
	s.indexReplaced(e)
	e.selector, e.replacesSince = selectorOf(r), replacesSince(r)
	if !e.replacesSince.IsZero() {
		// The leader's deletion time, not the moment this replica saw the delete (a
		// standby, or a replica restarted since): every replica keeps the same deadline,
		// Matched or not.
		e.reservedAt = e.replacesSince
	}
	e.expiresAt = e.reservedAt.Add(s.ttl(e))
	if e.placeholder != nil {
		// The same charge under the API object's identity; no reader sees between the two.
		s.AskPodOp(e.placeholder, false)
		e.placeholder = store.NewPlaceholderPod(r, e.node)
		s.AskPodOp(e.placeholder, true)
		heap.Push(&s.deadlines, e)
	}
	s.settle(e.node)
	return true
}

// dropHold forgets a hold: its charge, its match, its deadline (as expire ends them).
func (s *Store) dropHold(e *entry) {
	s.expire(e, e.expiresAt)
	s.unindexReplaced(e)
	s.rsvs.Delete(e.key)
}

// Holds returns the keys of the holds no Reservation took over yet.
func (s *Store) Holds() []types.NamespacedName {
	var out []types.NamespacedName
	s.rsvs.Range(func(key types.NamespacedName, e *entry) bool {
		if e.provisional {
			out = append(out, key)
		}
		return true
	})
	return out
}

// KeepsPlaceFor reports whether the place of leaving, a bound pod that is going (its
// deletion was asked for, and a kubelet takes up to its grace period to stop it; or the
// API already removed it and the cache has not applied that yet), is to be kept for pod once
// the cache sees leaving gone: leaving asks for it (reserve-on-delete on itself or its
// owner) and the hold would select pod (same namespace, leaving's labels less its
// controller's revision labels). Its controller creates the replacement as soon as the
// deletion is asked for, so a scheduler places it before any hold exists: this is how it
// knows where the place will be. It says no where PodGone would refuse the hold (leaving's
// node is gone, it requests nothing to hold); whether the owner still wants a replacement
// is decided when leaving is gone, as for any hold. The caller holds the read lock.
func (s *Store) KeepsPlaceFor(leaving, pod *corev1.Pod) bool {
	if leaving == nil || pod == nil || leaving.Spec.NodeName == "" ||
		!qualifies(leaving) || leaving.Namespace != pod.Namespace || leaving.UID == pod.UID {
		return false
	}
	if keep, err := s.keepsPlace(leaving); err != nil || !keep || !s.nodeExists(leaving.Spec.NodeName) {
		return false
	}
	// The hold PodGone would place (none: nothing to hold, no labels to select by).
	r, err := Replacement(leaving, 0, time.Time{})
	return err == nil && selectorOf(r).Matches(labels.Set(pod.Labels))
}
