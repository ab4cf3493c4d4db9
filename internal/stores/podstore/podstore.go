// Package podstore keeps the state of every pod in the cache (Assumed or Added), runs the
// assumed-pod state machine (transition.go) and finds assumed pods due to expire.
package podstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Store is the PodStore. It receives no plain pod events: the handler plans every pod event
// with Plan, fans the step out to the other stores and then Commits it here, last.
type Store struct {
	h *stores.CacheHandler
	// pods holds every pod, versioned so that a snapshot copies only the pods that changed.
	pods *store.Versioned[types.NamespacedName, *Entry]
	// assumed indexes the assumed pods, for expiry.
	assumed *store.Versioned[types.NamespacedName, *Entry]
}

var _ store.Store = (*Store)(nil)

// New returns an empty PodStore and wires CacheHandler.GetPodState to it.
func New(h *stores.CacheHandler) *Store {
	s := &Store{
		h:       h,
		pods:    store.NewVersioned[types.NamespacedName, *Entry](h.Generations()),
		assumed: store.NewVersioned[types.NamespacedName, *Entry](h.Generations()),
	}
	h.SetPodHandler(s.Get)
	return s
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.PodStoreName }

// Len implements stores.Store.
func (s *Store) Len() int { return s.pods.Len() }

// AssumedLen returns the number of assumed pods.
func (s *Store) AssumedLen() int { return s.assumed.Len() }

// Get returns the state of a pod.
func (s *Store) Get(key types.NamespacedName) (store.PodStatus, bool) {
	e, ok := s.pods.Get(key)
	if !ok {
		return store.PodStatus{}, false
	}
	return e.PodStatus, true
}

// Entry returns the full entry of a pod.
func (s *Store) Entry(key types.NamespacedName) (*Entry, bool) {
	return s.pods.Get(key)
}

// Range calls fn for every pod, in no particular order, until it returns false. It
// tolerates changes between two calls of fn as a range over a Go map does (the handler's
// rangePods lets the lock go between parts).
func (s *Store) Range(fn func(key types.NamespacedName, e *Entry) bool) {
	s.pods.RangeUnordered(fn)
}

// Commit sets the entry of a pod after a planned step (nil removes the pod).
func (s *Store) Commit(key types.NamespacedName, next *Entry) {
	if next == nil {
		s.pods.Delete(key)
		s.assumed.Delete(key)
		return
	}
	s.pods.Set(key, next)
	if next.State == store.PodAssumed {
		s.assumed.Set(key, next)
	} else {
		s.assumed.Delete(key)
	}
}

// ApplyPodOp records a synthetic pod event (an assumed pod expiring): an add makes the pod
// Added, a delete removes it.
func (s *Store) ApplyPodOp(pod *corev1.Pod, isAdd bool) {
	if isAdd {
		s.Commit(store.PodKey(pod), added(pod))
		return
	}
	s.Commit(store.PodKey(pod), nil)
}

// DueForExpiry returns the assumed pods whose binding finished and whose deadline passed.
// It visits only the assumed pods.
func (s *Store) DueForExpiry(now time.Time) []*Entry {
	var due []*Entry
	s.assumed.Range(func(_ types.NamespacedName, e *Entry) bool {
		if e.BindingFinished && !now.Before(e.Deadline) {
			due = append(due, e)
		}
		return true
	})
	return due
}
