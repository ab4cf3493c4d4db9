package stores

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PublicHandle returns h as the store.Handle a store registered out of tree is built with:
// a wrapper with store.Handle's methods only, so that no type assertion reaches the lock,
// the Set* wiring of the CacheHandler behind it, and its PodReader
// only reads (the manager's client behind it also writes).
func PublicHandle(h *CacheHandler) store.Handle { return publicHandle{h} }

type publicHandle struct{ h *CacheHandler }

func (p publicHandle) ComponentName() string         { return p.h.ComponentName() }
func (p publicHandle) SchedulerType() string         { return p.h.SchedulerType() }
func (p publicHandle) SubClusterKey() string         { return p.h.SubClusterKey() }
func (p publicHandle) SubCluster() string            { return p.h.SubCluster() }
func (p publicHandle) IsStoreEnabled(name Name) bool { return p.h.IsStoreEnabled(name) }
func (p publicHandle) PodAssumedTTL() time.Duration  { return p.h.PodAssumedTTL() }
func (p publicHandle) Period() time.Duration         { return p.h.Period() }
func (p publicHandle) Accounting() store.Accounting  { return p.h.Accounting() }
func (p publicHandle) StopCh() <-chan struct{}       { return p.h.StopCh() }
func (p publicHandle) PodReader() client.Reader {
	if r := p.h.PodReader(); r != nil {
		return readOnly{r}
	}
	return nil
}
func (p publicHandle) Clock() clock.WithTicker                      { return p.h.Clock() }
func (p publicHandle) Generations() *store.Generations              { return p.h.Generations() }
func (p publicHandle) GetNodeInfo(n string) (*store.NodeInfo, bool) { return p.h.GetNodeInfo(n) }
func (p publicHandle) GetPodState(key types.NamespacedName) (store.PodStatus, bool) {
	return p.h.GetPodState(key)
}

// readOnly is a client.Reader and nothing more: the manager's client behind it also writes.
type readOnly struct{ r client.Reader }

func (o readOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return o.r.Get(ctx, key, obj, opts...)
}

func (o readOnly) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return o.r.List(ctx, list, opts...)
}
