package podstore

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The assumed-pod state machine (kube-scheduler's, extended to pods the API reports before
// they are bound, which pod groups count as pending):
//
//	Initial --Assume--> Assumed --Add(bound)--> Added --Update--> Added --Delete--> Initial
//	   ^                  |  \                                      ^
//	   +-----Forget-------+   +--Expire (FinishBinding + TTL)-------+--> Initial
//
//	Added(unbound) --Assume--> Assumed; Forget or Expire return it to Added(unbound).
//	Assumed --Add/Update(unbound)--> Assumed, remembering the API's copy for Forget.
//
// Every other (state, event) pair is rejected with a typed error and changes nothing. The
// table below is the whole machine; the rules only build the step.

// phase is where a pod is, for the table.
type phase int

const (
	phaseInitial phase = iota
	phaseAssumed
	phaseAddedUnbound
	phaseAddedBound
	numPhases
)

// Entry is what the PodStore keeps per pod.
type Entry struct {
	store.PodStatus
}

// Dispatch is what the other stores see of an accepted event: an add, update or delete of
// pods, or nothing (Op empty).
type Dispatch struct {
	Op       stores.Op
	Old, New *corev1.Pod
}

// Step is an accepted event: what the other stores see, and the pod's next entry (nil when
// the pod leaves the cache).
type Step struct {
	Dispatch
	Next *Entry
}

// rule computes the step of one (phase, op) pair; cur is nil in phaseInitial.
type rule func(cur *Entry, pod *corev1.Pod, now time.Time, ttl time.Duration) (Step, error)

// transitions is the state machine: op -> phase -> rule.
var transitions = map[stores.Op][numPhases]rule{
	stores.OpAssume:        {assume, reject(store.ErrPodAlreadyAssumed), assumeUnbound, reject(store.ErrPodAlreadyAdded)},
	stores.OpFinishBinding: {reject(store.ErrPodNotAssumed), finishBinding, reject(store.ErrPodNotAssumed), reject(store.ErrPodNotAssumed)},
	stores.OpForget:        {reject(store.ErrPodNotAssumed), forget, reject(store.ErrPodNotAssumed), reject(store.ErrPodNotAssumed)},
	stores.OpAdd:           {add, confirm, reject(store.ErrPodAlreadyAdded), reject(store.ErrPodAlreadyAdded)},
	stores.OpUpdate:        {reject(store.ErrPodUnknown), updateAssumed, update, update},
	stores.OpDelete:        {reject(store.ErrPodUnknown), remove, remove, remove},
}

// Plan validates op for pod against the pod's current state and returns the step, without
// changing anything. now and the store's TTL set FinishBinding's deadline.
func (s *Store) Plan(op stores.Op, pod *corev1.Pod, now time.Time) (Step, error) {
	if pod == nil || pod.Name == "" {
		return Step{}, fmt.Errorf("%w: pod without a name", store.ErrInvalidObject)
	}
	rules, ok := transitions[op]
	if !ok {
		return Step{}, fmt.Errorf("%w: no pod transition for %q", store.ErrInvalidObject, op)
	}
	cur, _ := s.pods.Get(store.PodKey(pod))
	if cur != nil && pod.UID != "" && cur.Pod.UID != "" && pod.UID != cur.Pod.UID {
		return Step{}, fmt.Errorf("%w: cache has %s, event has %s", store.ErrUIDMismatch, cur.Pod.UID, pod.UID)
	}
	return rules[phaseOf(cur)](cur, pod, now, s.h.PodAssumedTTL())
}

func phaseOf(e *Entry) phase {
	switch {
	case e == nil:
		return phaseInitial
	case e.State == store.PodAssumed:
		return phaseAssumed
	case e.Pod.Spec.NodeName == "":
		return phaseAddedUnbound
	default:
		return phaseAddedBound
	}
}

func reject(err error) rule {
	return func(*Entry, *corev1.Pod, time.Time, time.Duration) (Step, error) { return Step{}, err }
}

func added(pod *corev1.Pod) *Entry {
	return &Entry{PodStatus: store.PodStatus{State: store.PodAdded, Pod: pod, APIPod: pod}}
}

func assume(_ *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	if pod.Spec.NodeName == "" {
		return Step{}, fmt.Errorf("%w: a pod is assumed onto a node, and spec.nodeName is empty", store.ErrInvalidObject)
	}
	return Step{
		Dispatch: Dispatch{Op: stores.OpAdd, New: pod},
		Next:     &Entry{PodStatus: store.PodStatus{State: store.PodAssumed, Pod: pod}},
	}, nil
}

func assumeUnbound(cur *Entry, pod *corev1.Pod, now time.Time, ttl time.Duration) (Step, error) {
	step, err := assume(cur, pod, now, ttl)
	if err != nil {
		return Step{}, err
	}
	step.Dispatch = Dispatch{Op: stores.OpUpdate, Old: cur.Pod, New: pod}
	step.Next.APIPod = cur.Pod
	return step, nil
}

func finishBinding(cur *Entry, _ *corev1.Pod, now time.Time, ttl time.Duration) (Step, error) {
	next := *cur
	next.BindingFinished = true
	next.Deadline = now.Add(ttl)
	return Step{Next: &next}, nil
}

func forget(cur *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	if pod.Spec.NodeName != cur.Pod.Spec.NodeName {
		return Step{}, fmt.Errorf("%w: assumed on %q, forgotten on %q", store.ErrNodeMismatch, cur.Pod.Spec.NodeName, pod.Spec.NodeName)
	}
	return revert(cur), nil
}

// revert undoes an assumption: back to the API's unbound copy, or out of the cache.
func revert(cur *Entry) Step {
	if cur.APIPod != nil {
		return Step{Dispatch: Dispatch{Op: stores.OpUpdate, Old: cur.Pod, New: cur.APIPod}, Next: added(cur.APIPod)}
	}
	return Step{Dispatch: Dispatch{Op: stores.OpDelete, Old: cur.Pod}}
}

func add(_ *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	return Step{Dispatch: Dispatch{Op: stores.OpAdd, New: pod}, Next: added(pod)}, nil
}

// confirm is the API reporting an assumed pod: bound, it becomes Added (on the node the API
// says, even if it differs from the assumed one); not yet bound, the copy is remembered.
func confirm(cur *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	if pod.Spec.NodeName == "" {
		next := *cur
		next.APIPod = pod
		return Step{Next: &next}, nil
	}
	return Step{Dispatch: Dispatch{Op: stores.OpUpdate, Old: cur.Pod, New: pod}, Next: added(pod)}, nil
}

func updateAssumed(cur *Entry, pod *corev1.Pod, now time.Time, ttl time.Duration) (Step, error) {
	if pod.Spec.NodeName != "" {
		return Step{}, store.ErrPodAssumedNotConfirmed
	}
	return confirm(cur, pod, now, ttl)
}

func update(cur *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	if cur.Pod.Spec.NodeName != "" && pod.Spec.NodeName != cur.Pod.Spec.NodeName {
		return Step{}, fmt.Errorf("%w: on %q, updated to %q", store.ErrNodeMismatch, cur.Pod.Spec.NodeName, pod.Spec.NodeName)
	}
	return Step{Dispatch: Dispatch{Op: stores.OpUpdate, Old: cur.Pod, New: pod}, Next: added(pod)}, nil
}

func remove(cur *Entry, pod *corev1.Pod, _ time.Time, _ time.Duration) (Step, error) {
	if pod.Spec.NodeName != "" && cur.Pod.Spec.NodeName != "" && pod.Spec.NodeName != cur.Pod.Spec.NodeName {
		return Step{}, fmt.Errorf("%w: on %q, removed from %q", store.ErrNodeMismatch, cur.Pod.Spec.NodeName, pod.Spec.NodeName)
	}
	return Step{Dispatch: Dispatch{Op: stores.OpDelete, Old: cur.Pod}}, nil
}
