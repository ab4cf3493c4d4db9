package bench

import (
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// multicache is the multicache handler, built as the operator builds it.
type multicache struct {
	h *handler.Handler
}

var _ Cache = (*multicache)(nil)

// NewMulticache returns an empty handler with the given stores enabled (nil: the default,
// every store) on clk (nil: the real clock).
func NewMulticache(clk clock.WithTicker, enabled ...stores.Name) *handler.Handler {
	config, err := stores.NewCacheHandler(stores.Config{EnabledStores: enabled, Clock: clk})
	if err != nil {
		panic(fmt.Sprintf("multicache configuration: %v", err))
	}
	return handler.New(config, logr.Discard())
}

// AddNode implements Cache.
func (m *multicache) AddNode(node *corev1.Node) error { return m.h.Add(node) }

// AddPod implements Cache.
func (m *multicache) AddPod(pod *corev1.Pod) error { return m.h.Add(pod) }

// UpdatePod implements Cache.
func (m *multicache) UpdatePod(oldPod, newPod *corev1.Pod) error {
	return m.h.Update(oldPod, newPod)
}

// RemovePod implements Cache with DeletePod.
func (m *multicache) RemovePod(pod *corev1.Pod) error { return m.h.Delete(pod) }

// AssumePod implements Cache: AssumePod, then FinishBinding.
func (m *multicache) AssumePod(pod *corev1.Pod) error {
	if err := m.h.AssumePod(pod); err != nil {
		return err
	}
	return m.h.FinishBinding(pod)
}

// ForgetPod implements Cache.
func (m *multicache) ForgetPod(pod *corev1.Pod) error { return m.h.ForgetPod(pod) }

// NewSnapshot implements Cache: a snapshot of every enabled store, whole cluster.
func (m *multicache) NewSnapshot() Snapshot { return m.h.NewSnapshot(store.SnapshotOptions{}) }

// UpdateSnapshot implements Cache.
func (m *multicache) UpdateSnapshot(snap Snapshot) error {
	return m.h.UpdateSnapshot(snap.(*handler.Snapshot))
}

// SnapshotLen implements Cache.
func (m *multicache) SnapshotLen(snap Snapshot) int {
	return snap.(*handler.Snapshot).Nodes().Len()
}

// GetPod implements Cache.
func (m *multicache) GetPod(pod *corev1.Pod) (*corev1.Pod, error) { return m.h.GetPod(pod) }

// Close implements Cache: nothing runs in the background.
func (m *multicache) Close() {}
