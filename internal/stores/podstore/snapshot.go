package podstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot copies the state of every pod.
type Snapshot struct {
	pods map[types.NamespacedName]store.PodStatus
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PodStoreName }

// Assumed returns the status of a pod that is assumed.
func (s *Snapshot) Assumed(key types.NamespacedName) (store.PodStatus, bool) {
	st, ok := s.pods[key]
	if !ok || st.State != store.PodAssumed {
		return store.PodStatus{}, false
	}
	return st, true
}

// Get returns the state of a pod, assumed or added, as Store.Get did when the snapshot was
// updated.
func (s *Snapshot) Get(key types.NamespacedName) (store.PodStatus, bool) {
	st, ok := s.pods[key]
	return st, ok
}

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return &Snapshot{pods: map[types.NamespacedName]store.PodStatus{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap store.Snapshot, since int64) {
	ps := snap.(*Snapshot)
	store.Sync(s.pods, ps.pods, since, func(_ store.PodStatus, e *Entry) store.PodStatus { return e.PodStatus }, nil)
}
