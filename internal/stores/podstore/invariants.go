package podstore

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// CheckInvariants implements stores.Store: every assumed pod is indexed as assumed (and only
// those), is on a node, and has a deadline exactly when its binding finished; only assumed
// pods remember an unbound API copy (an added pod's API copy is itself); every entry is
// filed under its own key.
func (s *Store) CheckInvariants() []error {
	var errs []error
	assumed := 0
	s.pods.Range(func(key types.NamespacedName, e *Entry) bool {
		if e.State == store.PodAssumed {
			assumed++
		}
		errs = append(errs, s.CheckEntry(key, e)...)
		return true
	})
	if assumed != s.assumed.Len() {
		errs = append(errs, fmt.Errorf("%d assumed pods, %d in the assumed index", assumed, s.assumed.Len()))
	}
	return errs
}

// CheckAssumedIndex checks that every pod in the assumed index is held and assumed: with
// CheckEntry of every entry, the same as CheckInvariants, in parts.
func (s *Store) CheckAssumedIndex() []error {
	var errs []error
	s.assumed.Range(func(key types.NamespacedName, _ *Entry) bool {
		if e, ok := s.pods.Get(key); !ok || e.State != store.PodAssumed {
			errs = append(errs, fmt.Errorf("pod %s: in the assumed index but not an assumed pod", key))
		}
		return true
	})
	return errs
}

// CheckEntry checks one entry (CheckInvariants checks every entry, then the assumed index):
// it holds its own pod, indexed as assumed exactly when it is, with what its state implies.
// Call it with the handler's read lock held.
func (s *Store) CheckEntry(key types.NamespacedName, e *Entry) []error {
	if e.Pod == nil || store.PodKey(e.Pod) != key {
		return []error{fmt.Errorf("pod %s: entry holds another pod", key)}
	}
	var errs []error
	_, indexed := s.assumed.Get(key)
	switch e.State {
	case store.PodAssumed:
		if !indexed {
			errs = append(errs, fmt.Errorf("pod %s: assumed but not in the assumed index", key))
		}
		if e.Pod.Spec.NodeName == "" {
			errs = append(errs, fmt.Errorf("pod %s: assumed without a node", key))
		}
		if e.BindingFinished == e.Deadline.IsZero() {
			errs = append(errs, fmt.Errorf("pod %s: binding finished %v but deadline %v", key, e.BindingFinished, e.Deadline))
		}
		if e.APIPod != nil && e.APIPod.Spec.NodeName != "" {
			errs = append(errs, fmt.Errorf("pod %s: assumed, but the API copy it remembers is bound", key))
		}
	case store.PodAdded:
		if indexed {
			errs = append(errs, fmt.Errorf("pod %s: added but in the assumed index", key))
		}
		if e.APIPod != e.Pod || e.BindingFinished || !e.Deadline.IsZero() {
			errs = append(errs, fmt.Errorf("pod %s: added, but its API copy differs or assumed-only fields are set", key))
		}
	default:
		errs = append(errs, fmt.Errorf("pod %s: unknown state %q", key, e.State))
	}
	return errs
}
