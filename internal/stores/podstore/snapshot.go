package podstore

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Snapshot copies the assumed pods: every other pod of the snapshot's node infos is Added.
type Snapshot struct {
	assumed map[types.NamespacedName]stores.PodStatus
}

// StoreName implements stores.Snapshot.
func (s *Snapshot) StoreName() stores.Name { return stores.PodStoreName }

// IsAssumed reports whether a pod was assumed when the snapshot was taken.
func (s *Snapshot) IsAssumed(key types.NamespacedName) bool {
	_, ok := s.assumed[key]
	return ok
}

// Assumed returns the status of an assumed pod.
func (s *Snapshot) Assumed(key types.NamespacedName) (stores.PodStatus, bool) {
	st, ok := s.assumed[key]
	return st, ok
}

// AssumedLen returns the number of assumed pods.
func (s *Snapshot) AssumedLen() int { return len(s.assumed) }

// NewSnapshot implements stores.Store.
func (s *Store) NewSnapshot(stores.SnapshotOptions) stores.Snapshot {
	return &Snapshot{assumed: map[types.NamespacedName]stores.PodStatus{}}
}

// UpdateSnapshot implements stores.Store.
func (s *Store) UpdateSnapshot(snap stores.Snapshot, since int64) {
	stores.Sync(s.assumed, snap.(*Snapshot).assumed, since,
		func(_ stores.PodStatus, e *Entry) stores.PodStatus { return e.PodStatus }, nil)
}
