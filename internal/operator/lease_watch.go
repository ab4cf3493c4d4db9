package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaseWatch keeps this replica's observation of the lease current between the elector's
// polls. A standby judges the lease expired a lease duration after it first saw the
// current record (client-go's rule: its own clock, never the holder's), and the elector
// polls every 1 to 2.2 retry periods: the leader's last renewal was seen up to 2.2 retry
// periods late, so the take-over came that much after the lease had really expired (4.4 s
// with the default retry period of 2 s). Watching the one Lease sees each renewal as it is
// written, so takeOverAtExpiry waits for the expiry as it is. It runs on every replica for
// the manager's life and costs one watch of one object.
type leaseWatch struct {
	lock      *fencedLock
	cs        kubernetes.Interface
	namespace string
	name      string
}

// newLeaseWatch builds the watch of the lock's Lease; cfg must have no client timeout (it
// would end every watch).
func newLeaseWatch(cfg *rest.Config, lock *fencedLock, namespace, name string) (*leaseWatch, error) {
	cs, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election-watch"))
	if err != nil {
		return nil, fmt.Errorf("leader-election watch client: %w", err)
	}
	return &leaseWatch{lock: lock, cs: cs, namespace: namespace, name: name}, nil
}

// NeedLeaderElection is false: a standby needs it most.
func (w *leaseWatch) NeedLeaderElection() bool { return false }

// Start runs an informer of the Lease (field-selected by name) until ctx is done.
func (w *leaseWatch) Start(ctx context.Context) error {
	byName := fields.OneTermEqualSelector("metadata.name", w.name).String()
	leases := w.cs.CoordinationV1().Leases(w.namespace)
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return leases.Watch(ctx, o)
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &coordinationv1.Lease{}, 0, toolscache.Indexers{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj) },
		UpdateFunc: func(_, obj any) { w.observe(obj) },
	}); err != nil {
		return fmt.Errorf("watching the leader-election lease: %w", err)
	}
	inf.RunWithContext(ctx)
	return nil
}

// observe records the lease's record as the lock's Get would read it.
func (w *leaseWatch) observe(obj any) {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return
	}
	w.lock.observe(resourcelock.LeaseSpecToLeaderElectionRecord(&lease.Spec))
}

// observe remembers a lease record and, when it differs from the last one seen, when it
// was first seen. The bytes are those LeaseLock.Get returns, so the elector's reads and the
// watch's agree on what is a change.
func (l *fencedLock) observe(ler *resourcelock.LeaderElectionRecord) {
	raw, err := json.Marshal(*ler)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seenLocked(raw)
}

// seenLocked remembers raw as the record last seen, and now as when it was first seen if
// it is new. l.mu is held.
func (l *fencedLock) seenLocked(raw []byte) {
	if !bytes.Equal(raw, l.seenRaw) {
		l.seenRaw, l.seenAt = raw, l.clock()
	}
}
