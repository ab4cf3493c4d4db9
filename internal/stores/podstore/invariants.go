package podstore

import (
	"fmt"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// CheckInvariants implements stores.Store: every assumed pod is indexed as assumed (and only
// those), is on a node, and has a deadline exactly when its binding finished; only assumed
// pods remember an unbound API copy (an added pod's API copy is itself); every entry is
// filed under its own key.
func (s *Store) CheckInvariants() []error {
	var errs []error
	assumed := 0
	for key, e := range s.pods {
		if e.Pod == nil || stores.PodKey(e.Pod) != key {
			errs = append(errs, fmt.Errorf("pod %s: entry holds another pod", key))
			continue
		}
		_, indexed := s.assumed.Get(key)
		switch e.State {
		case stores.PodAssumed:
			assumed++
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
		case stores.PodAdded:
			if indexed {
				errs = append(errs, fmt.Errorf("pod %s: added but in the assumed index", key))
			}
			if e.APIPod != e.Pod || e.BindingFinished || !e.Deadline.IsZero() {
				errs = append(errs, fmt.Errorf("pod %s: added, but its API copy differs or assumed-only fields are set", key))
			}
		default:
			errs = append(errs, fmt.Errorf("pod %s: unknown state %q", key, e.State))
		}
	}
	if assumed != s.assumed.Len() {
		errs = append(errs, fmt.Errorf("%d assumed pods, %d in the assumed index", assumed, s.assumed.Len()))
	}
	return errs
}
