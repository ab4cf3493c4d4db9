// Package movementstore keeps descheduler Movements: per owner, on which nodes the
// descheduler suggests its pods should land, and which pods consumed the suggestion (pods
// annotated v1alpha1.MovementNameAnnotation=<movement>, placed on a node).
package movementstore

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// movement is one Movement (nil while only pods refer to it) and the pods that consumed it.
type movement struct {
	name string
	m    *v1alpha1.Movement
	pods map[types.NamespacedName]*corev1.Pod
}

// Store is the MovementStore.
type Store struct {
	h         *stores.CacheHandler
	movements *store.Versioned[string, *movement]
	// byOwner indexes which movements make suggestions for an owner.
	byOwner map[store.OwnerKey]map[string]struct{}
	// Outbox holds the movements whose status changed, until the handler takes them.
	stores.Outbox
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.PodHandler      = (*Store)(nil)
	_ store.MovementHandler = (*Store)(nil)
)

// New returns an empty MovementStore.
func New(h *stores.CacheHandler) *Store {
	return &Store{
		h:         h,
		movements: store.NewVersioned[string, *movement](h.Generations()),
		byOwner:   map[store.OwnerKey]map[string]struct{}{},
	}
}

// Name implements stores.Store.
func (s *Store) Name() stores.Name { return stores.MovementStoreName }

// Len implements stores.Store: the number of movements (including ones only pods refer to).
func (s *Store) Len() int { return s.movements.Len() }

// consumed returns the movement a pod consumed, if it is placed on a node.
func consumed(pod *corev1.Pod) (string, bool) {
	name := pod.Annotations[v1alpha1.MovementNameAnnotation]
	return name, name != "" && pod.Spec.NodeName != ""
}

// AddPod records a pod that consumed a movement.
func (s *Store) AddPod(pod *corev1.Pod) {
	name, ok := consumed(pod)
	if !ok {
		return
	}
	mv := s.getOrCreate(name)
	mv.pods[store.PodKey(pod)] = pod
	s.changed(mv)
}

// UpdatePod follows a pod that consumed a movement.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	oldName, was := consumed(oldPod)
	newName, is := consumed(newPod)
	if was && is && oldName == newName {
		if mv, ok := s.movements.Get(newName); ok {
			mv.pods[store.PodKey(newPod)] = newPod
			s.changed(mv)
			return
		}
	}
	if was {
		s.DeletePod(oldPod)
	}
	if is {
		s.AddPod(newPod)
	}
}

// DeletePod forgets a pod that consumed a movement.
func (s *Store) DeletePod(pod *corev1.Pod) {
	name, ok := consumed(pod)
	if !ok {
		return
	}
	if mv, found := s.movements.Get(name); found {
		delete(mv.pods, store.PodKey(pod))
		s.changedOrGone(mv)
	}
}

// AddMovement adds a movement and indexes the owners it makes suggestions for.
func (s *Store) AddMovement(m *v1alpha1.Movement) {
	mv := s.getOrCreate(m.Name)
	s.unindex(mv)
	mv.m = m
	s.index(mv)
	s.changed(mv)
}

// UpdateMovement replaces a movement.
func (s *Store) UpdateMovement(_, m *v1alpha1.Movement) { s.AddMovement(m) }

// DeleteMovement removes a movement; the pods that consumed it are kept until they go, in
// case it is recreated.
func (s *Store) DeleteMovement(m *v1alpha1.Movement) {
	if mv, ok := s.movements.Get(m.Name); ok {
		s.unindex(mv)
		mv.m = nil
		s.changedOrGone(mv)
	}
}

func (s *Store) getOrCreate(name string) *movement {
	if mv, ok := s.movements.Get(name); ok {
		return mv
	}
	mv := &movement{name: name, pods: map[types.NamespacedName]*corev1.Pod{}}
	s.movements.Set(name, mv)
	return mv
}

func (s *Store) index(mv *movement) {
	for _, o := range mv.m.Spec.Owners {
		key := ownerKey(o.Owner)
		if s.byOwner[key] == nil {
			s.byOwner[key] = map[string]struct{}{}
		}
		s.byOwner[key][mv.name] = struct{}{}
	}
}

func (s *Store) unindex(mv *movement) {
	if mv.m == nil {
		return
	}
	for _, o := range mv.m.Spec.Owners {
		key := ownerKey(o.Owner)
		delete(s.byOwner[key], mv.name)
		if len(s.byOwner[key]) == 0 {
			delete(s.byOwner, key)
		}
	}
}

func (s *Store) changed(mv *movement) {
	s.movements.Touch(mv.name)
	if mv.m != nil {
		s.ObjectChanged(stores.KindMovement, types.NamespacedName{Name: mv.name})
	}
}

func (s *Store) changedOrGone(mv *movement) {
	if mv.m == nil && len(mv.pods) == 0 {
		s.movements.Delete(mv.name)
		return
	}
	s.changed(mv)
}

func ownerKey(o v1alpha1.OwnerInfo) store.OwnerKey {
	return store.OwnerKey{Type: o.Type, Namespace: o.Namespace, Name: o.Name}
}
