package reservationstore

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

var _ stores.PodOpSource = (*Store)(nil)

// ask asks for a placeholder to be charged (add) or released on the other stores; the
// handler applies it once the current call returns.
func (s *Store) ask(placeholder *corev1.Pod, add bool) {
	s.podOps = append(s.podOps, stores.PodOp{Pod: placeholder, Add: add})
}

// TakePodOps returns the placeholder events asked for since the last call, in order, and
// forgets them.
func (s *Store) TakePodOps() []stores.PodOp {
	ops := s.podOps
	s.podOps = nil
	return ops
}
