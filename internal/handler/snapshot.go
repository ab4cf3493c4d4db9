package handler

import (
	"time"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Snapshot is a consistent copy of every enabled store at one handler generation. It is
// refreshed incrementally by UpdateSnapshot (only objects whose generation moved since the
// snapshot's are copied, in the manner of kube-scheduler's cache) and read without any lock.
// A snapshot belongs to one goroutine: update it and read it from the same one.
type Snapshot struct {
	generation int64
	parts      []store.Snapshot
	byName     map[stores.Name]store.Snapshot
}

// NewSnapshot returns an empty snapshot of the enabled stores, shaped by opts (a
// NodeFilter restricts the node infos to a sub-cluster); fill it with UpdateSnapshot.
func (h *Handler) NewSnapshot(opts store.SnapshotOptions) *Snapshot {
	snap := &Snapshot{byName: map[stores.Name]store.Snapshot{}}
	for _, s := range h.stores {
		part := s.NewSnapshot(opts)
		snap.parts = append(snap.parts, part)
		snap.byName[s.Name()] = part
	}
	return snap
}

// UpdateSnapshot implements ClusterEventsHandler. It holds the read lock only while it
// copies what changed, so writers wait for O(changes), not O(cluster).
func (h *Handler) UpdateSnapshot(snap *Snapshot) error {
	start := time.Now()
	h.mu.RLock()
	for i, s := range h.stores {
		s.UpdateSnapshot(snap.parts[i], snap.generation)
	}
	snap.generation = h.config.Generations().Current()
	h.mu.RUnlock()
	metrics.SnapshotDuration.Observe(time.Since(start).Seconds())
	return nil
}

// Generation is the handler generation the snapshot reflects.
func (s *Snapshot) Generation() int64 { return s.generation }

// Nodes returns the node infos.
func (s *Snapshot) Nodes() *nodestore.Snapshot {
	return part[*nodestore.Snapshot](s, stores.NodeStoreName)
}

// Pods returns the assumed pods.
func (s *Snapshot) Pods() *podstore.Snapshot { return part[*podstore.Snapshot](s, stores.PodStoreName) }

// PodGroups returns the pod groups, or nil when the store is disabled.
func (s *Snapshot) PodGroups() *podgroupstore.Snapshot {
	return part[*podgroupstore.Snapshot](s, stores.PodGroupStoreName)
}

// PDBs returns the disruption budgets, or nil when the store is disabled.
func (s *Snapshot) PDBs() *pdbstore.Snapshot { return part[*pdbstore.Snapshot](s, stores.PDBStoreName) }

// Movements returns the movements, or nil when the store is disabled.
func (s *Snapshot) Movements() *movementstore.Snapshot {
	return part[*movementstore.Snapshot](s, stores.MovementStoreName)
}

// Reservations returns the reservations, or nil when the store is disabled.
func (s *Snapshot) Reservations() *reservationstore.Snapshot {
	return part[*reservationstore.Snapshot](s, stores.ReservationStoreName)
}

// Part returns the part of the snapshot a store keeps, nil when the store is disabled: how
// a store registered out of tree is read from a snapshot (assert its own snapshot type).
func (s *Snapshot) Part(name stores.Name) store.Snapshot { return s.byName[name] }

func part[T store.Snapshot](s *Snapshot, name stores.Name) T {
	p, _ := s.byName[name].(T)
	return p
}
