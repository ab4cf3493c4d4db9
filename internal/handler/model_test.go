package handler

import (
	"errors"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// model is the reference the model-based test compares the handler with: plain maps and
// rules written for clarity, recomputing derived state (node charges, group counts) from
// scratch instead of maintaining it.
type model struct {
	now     time.Time
	ttl     time.Duration // pod assumed TTL
	rsvTTL  time.Duration // default reservation TTL
	pods    map[types.NamespacedName]*mPod
	objects map[stores.Kind]map[string]types.UID // every non-pod kind: key -> UID
	nodes   map[string]*corev1.Node
	nm      map[string]*v1alpha1.NMNode
	cnr     map[string]*v1alpha1.CustomNodeResource
	groups  map[types.NamespacedName]int32 // group -> minMember
	rsvs    map[types.NamespacedName]*mRsv
}

type mPod struct {
	state    store.PodState
	pod      *corev1.Pod
	informer *corev1.Pod
	finished bool
	deadline time.Time
}

type mRsv struct {
	r     *v1alpha1.Reservation
	phase v1alpha1.ReservationPhase
	// node is where the reservation was placed: a later spec change of a Matched or Expired
	// reservation does not move it.
	node                  string
	owner                 types.NamespacedName // zero when none
	linked                bool                 // owner still counts as this reservation's pod
	reservedAt, expiresAt time.Time
}

func newModel(now time.Time, ttl, rsvTTL time.Duration) *model {
	return &model{
		now: now, ttl: ttl, rsvTTL: rsvTTL,
		pods:    map[types.NamespacedName]*mPod{},
		objects: map[stores.Kind]map[string]types.UID{},
		nodes:   map[string]*corev1.Node{},
		nm:      map[string]*v1alpha1.NMNode{},
		cnr:     map[string]*v1alpha1.CustomNodeResource{},
		groups:  map[types.NamespacedName]int32{},
		rsvs:    map[types.NamespacedName]*mRsv{},
	}
}

// dispatch is what the stores see of a pod event.
type dispatch struct {
	op       stores.Op
	old, new *corev1.Pod
}

// podEvent applies a pod event to the model and returns the error the handler must return.
func (m *model) podEvent(op stores.Op, pod *corev1.Pod) error {
	if pod.Name == "" {
		return store.ErrInvalidObject
	}
	key := store.PodKey(pod)
	cur := m.pods[key]
	if cur != nil && pod.UID != cur.pod.UID {
		return store.ErrUIDMismatch
	}
	bound := pod.Spec.NodeName != ""
	switch {
	case cur == nil:
		switch op {
		case stores.OpAssume:
			if !bound {
				return store.ErrInvalidObject
			}
			m.commit(key, &mPod{state: store.PodAssumed, pod: pod}, dispatch{stores.OpAdd, nil, pod}, "")
		case stores.OpAdd:
			m.commit(key, &mPod{state: store.PodAdded, pod: pod}, dispatch{stores.OpAdd, nil, pod}, "")
		case stores.OpFinishBinding, stores.OpForget:
			return store.ErrPodNotAssumed
		default:
			return store.ErrPodUnknown
		}
	case cur.state == store.PodAssumed:
		switch op {
		case stores.OpAssume:
			return store.ErrPodAlreadyAssumed
		case stores.OpFinishBinding:
			cur.finished, cur.deadline = true, m.now.Add(m.ttl)
		case stores.OpForget:
			if pod.Spec.NodeName != cur.pod.Spec.NodeName {
				return store.ErrNodeMismatch
			}
			m.revert(key, cur)
		case stores.OpAdd, stores.OpUpdate:
			if !bound {
				cur.informer = pod
				return nil
			}
			if op == stores.OpUpdate {
				return store.ErrPodAssumedNotConfirmed
			}
			m.commit(key, &mPod{state: store.PodAdded, pod: pod}, dispatch{stores.OpUpdate, cur.pod, pod}, store.PodAssumed)
		case stores.OpDelete:
			if bound && pod.Spec.NodeName != cur.pod.Spec.NodeName {
				return store.ErrNodeMismatch
			}
			m.commit(key, nil, dispatch{stores.OpDelete, cur.pod, nil}, store.PodAssumed)
		}
	default: // Added
		curBound := cur.pod.Spec.NodeName != ""
		switch op {
		case stores.OpAssume:
			if curBound {
				return store.ErrPodAlreadyAdded
			}
			if !bound {
				return store.ErrInvalidObject
			}
			m.commit(key, &mPod{state: store.PodAssumed, pod: pod, informer: cur.pod}, dispatch{stores.OpUpdate, cur.pod, pod}, store.PodAdded)
		case stores.OpAdd:
			return store.ErrPodAlreadyAdded
		case stores.OpFinishBinding, stores.OpForget:
			return store.ErrPodNotAssumed
		case stores.OpUpdate:
			if curBound && pod.Spec.NodeName != cur.pod.Spec.NodeName {
				return store.ErrNodeMismatch
			}
			m.commit(key, &mPod{state: store.PodAdded, pod: pod}, dispatch{stores.OpUpdate, cur.pod, pod}, store.PodAdded)
		case stores.OpDelete:
			if bound && curBound && pod.Spec.NodeName != cur.pod.Spec.NodeName {
				return store.ErrNodeMismatch
			}
			m.commit(key, nil, dispatch{stores.OpDelete, cur.pod, nil}, store.PodAdded)
		}
	}
	return nil
}

// revert undoes an assumption (forget or expiry).
func (m *model) revert(key types.NamespacedName, cur *mPod) {
	if cur.informer != nil {
		m.commit(key, &mPod{state: store.PodAdded, pod: cur.informer}, dispatch{stores.OpUpdate, cur.pod, cur.informer}, store.PodAssumed)
		return
	}
	m.commit(key, nil, dispatch{stores.OpDelete, cur.pod, nil}, store.PodAssumed)
}

// commit lets the reservations see a pod event (with the pod's state before it), then sets
// the pod's next state.
func (m *model) commit(key types.NamespacedName, next *mPod, d dispatch, before store.PodState) {
	m.reservationsSee(d, key, before)
	if next == nil {
		delete(m.pods, key)
	} else {
		m.pods[key] = next
	}
}

// expire expires due assumed pods, in any order (each is independent).
func (m *model) expire() {
	for key, p := range m.pods {
		if p.state == store.PodAssumed && p.finished && !m.now.Before(p.deadline) {
			m.reservationsSee(dispatch{stores.OpDelete, p.pod, nil}, key, store.PodAssumed)
			delete(m.pods, key)
			if p.informer != nil {
				m.reservationsSee(dispatch{stores.OpAdd, nil, p.informer}, key, "")
				m.pods[key] = &mPod{state: store.PodAdded, pod: p.informer}
			}
		}
	}
}

// reservationsSee applies the reservation rules to one pod event.
func (m *model) reservationsSee(d dispatch, key types.NamespacedName, before store.PodState) {
	owned := m.ownedBy(key)
	switch d.op {
	case stores.OpAdd:
		if owned == nil {
			m.tryMatch(d.new)
		}
	case stores.OpUpdate:
		if owned != nil {
			if d.new.Spec.NodeName == owned.node || before == store.PodAdded {
				return
			}
			owned.linked, owned.owner, owned.phase = false, types.NamespacedName{}, v1alpha1.ReservationReserved
		}
		m.tryMatch(d.new)
	case stores.OpDelete:
		if owned == nil {
			return
		}
		if before == store.PodAdded {
			owned.linked = false
			return
		}
		owned.linked, owned.owner, owned.phase = false, types.NamespacedName{}, v1alpha1.ReservationReserved
	}
}

func (m *model) ownedBy(key types.NamespacedName) *mRsv {
	for _, r := range m.rsvs {
		if r.linked && r.owner == key {
			return r
		}
	}
	return nil
}

// tryMatch hands the first Reserved reservation (by key) on the pod's node that selects it
// to the pod.
func (m *model) tryMatch(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" || store.IsTerminal(pod) || store.IsBestEffort(pod) {
		return
	}
	var keys []types.NamespacedName
	for k, r := range m.rsvs {
		sel := labels.SelectorFromSet(r.r.Spec.PodSelector.MatchLabels)
		if r.phase == v1alpha1.ReservationReserved && r.node == pod.Spec.NodeName &&
			k.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels)) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	r := m.rsvs[keys[0]]
	r.phase, r.owner, r.linked = v1alpha1.ReservationMatched, store.PodKey(pod), true
}

// objectEvent applies an event of a kind other than Pod; apply runs only when accepted.
func (m *model) objectEvent(kind stores.Kind, op stores.Op, key string, uid types.UID, apply func()) error {
	if m.objects[kind] == nil {
		m.objects[kind] = map[string]types.UID{}
	}
	cur, exists := m.objects[kind][key]
	switch {
	case op == stores.OpAdd && exists:
		return store.ErrAlreadyExists
	case op != stores.OpAdd && !exists:
		return store.ErrNotFound
	case op != stores.OpAdd && cur != uid:
		return store.ErrUIDMismatch
	}
	if op == stores.OpDelete {
		delete(m.objects[kind], key)
	} else {
		m.objects[kind][key] = uid
	}
	apply()
	return nil
}

func (m *model) rsvTTLOf(r *v1alpha1.Reservation) time.Duration {
	if r.Spec.TTLSeconds != nil {
		return time.Duration(*r.Spec.TTLSeconds) * time.Second
	}
	return m.rsvTTL
}

// reservationEvent applies the reservation rules to a reservation event.
func (m *model) reservationEvent(op stores.Op, r *v1alpha1.Reservation) {
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
	switch op {
	case stores.OpAdd:
		e := &mRsv{r: r}
		m.rsvs[key] = e
		m.place(e)
	case stores.OpUpdate:
		e := m.rsvs[key]
		old := e.r
		e.r = r
		if !equality.Semantic.DeepEqual(old.Spec, r.Spec) &&
			(e.phase == v1alpha1.ReservationPending || e.phase == v1alpha1.ReservationReserved) {
			m.place(e)
		}
	case stores.OpDelete:
		delete(m.rsvs, key)
	}
}

// place puts a reservation that holds nothing where it belongs. Pods of the test have no
// landing time, so none already on the node consumes it.
func (m *model) place(e *mRsv) {
	e.node = e.r.Spec.NodeName
	if e.node == "" || !m.nodeKnown(e.node) {
		// No node, or one with no source yet: nothing is charged until it appears.
		e.phase, e.node = v1alpha1.ReservationPending, ""
		return
	}
	if e.reservedAt.IsZero() {
		e.reservedAt = m.now
	}
	e.expiresAt = e.reservedAt.Add(m.rsvTTLOf(e.r))
	e.phase = v1alpha1.ReservationReserved
}

// nodeKnown reports whether a node has a source (Node, NMNode or CNR).
func (m *model) nodeKnown(name string) bool {
	return m.nodes[name] != nil || m.nm[name] != nil || m.cnr[name] != nil
}

// nodeAppeared places the Pending reservations that name the node, now that it has a
// source.
func (m *model) nodeAppeared(name string) {
	for _, e := range m.rsvs {
		if e.phase == v1alpha1.ReservationPending && e.r.Spec.NodeName == name && m.nodeKnown(name) {
			m.place(e)
		}
	}
}

// reap expires Reserved reservations whose deadline passed.
func (m *model) reap() {
	for _, e := range m.rsvs {
		if e.phase == v1alpha1.ReservationReserved && !m.now.Before(e.expiresAt) {
			e.phase = v1alpha1.ReservationExpired
		}
	}
}

// sameError reports whether the handler's error is the model's (both nil, or errors.Is).
func sameError(got, want error) bool {
	if want == nil || got == nil {
		return want == got
	}
	return errors.Is(got, want)
}
