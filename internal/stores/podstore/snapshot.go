package podstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot copies the state of every pod, and indexes the assumed ones.
type Snapshot struct {
	pods    map[types.NamespacedName]store.PodStatus
	assumed map[types.NamespacedName]store.PodStatus
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PodStoreName }

// Assumed returns the status of an assumed pod.
func (s *Snapshot) Assumed(key types.NamespacedName) (store.PodStatus, bool) {
	st, ok := s.assumed[key]
	return st, ok
}

// Get returns the state of a pod, assumed or added, as Store.Get did when the snapshot was
// updated.
func (s *Snapshot) Get(key types.NamespacedName) (store.PodStatus, bool) {
	st, ok := s.pods[key]
	return st, ok
}

// AssumedLen returns the number of assumed pods.
func (s *Snapshot) AssumedLen() int { return len(s.assumed) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return &Snapshot{pods: map[types.NamespacedName]store.PodStatus{}, assumed: map[types.NamespacedName]store.PodStatus{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ps := snap.(*Snapshot)
	status := func(_ store.PodStatus, e *Entry) store.PodStatus { return e.PodStatus }
	store.Sync(s.pods, ps.pods, since, status, nil)
	store.Sync(s.assumed, ps.assumed, since, status, nil)
}
