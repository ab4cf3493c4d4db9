package operator

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// gateLock is the leader-election lock of an operator embedded in a component that elects
// its own leader (Options.Leading): an in-process record, not a Lease. Until leading is
// closed it shows the record held by the embedding component's leader and renewed a moment
// ago, so the manager's elector waits quietly; once closed, the elector acquires it at its
// next retry and keeps it (the embedding component exits when it stops leading). The
// manager's leader-only runnables (status writers, the reaper, siblings that need leader
// election) therefore start when, and only where, the embedding component leads.
type gateLock struct {
	leading  <-chan struct{}
	identity string
	lease    time.Duration

	mu     sync.Mutex
	record *resourcelock.LeaderElectionRecord
}

// gateHolder is the holder the record names until the gate opens.
const gateHolder = "embedding-component-leader"

var errGateClosed = errors.New("the embedding component does not lead")

func newGateLock(leading <-chan struct{}, identity string, lease time.Duration) *gateLock {
	return &gateLock{leading: leading, identity: identity, lease: lease}
}

func (l *gateLock) open() bool {
	select {
	case <-l.leading:
		return true
	default:
		return false
	}
}

// Get implements resourcelock.Interface.
func (l *gateLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	var rec resourcelock.LeaderElectionRecord
	if !l.open() {
		now := metav1.Now()
		rec = resourcelock.LeaderElectionRecord{HolderIdentity: gateHolder, LeaseDurationSeconds: int(l.lease.Seconds()),
			AcquireTime: now, RenewTime: now}
	} else {
		l.mu.Lock()
		if l.record == nil {
			l.mu.Unlock()
			return nil, nil, apierrors.NewNotFound(coordinationv1.Resource("leases"), gateHolder)
		}
		rec = *l.record
		l.mu.Unlock()
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, err
	}
	return &rec, raw, nil
}

// Create implements resourcelock.Interface.
func (l *gateLock) Create(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.set(ler)
}

// Update implements resourcelock.Interface.
func (l *gateLock) Update(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.set(ler)
}

func (l *gateLock) set(ler resourcelock.LeaderElectionRecord) error {
	if !l.open() {
		return errGateClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record = &ler
	return nil
}

// RecordEvent implements resourcelock.Interface: there is no object to record events on.
func (l *gateLock) RecordEvent(string) {}

// Identity implements resourcelock.Interface.
func (l *gateLock) Identity() string { return l.identity }

// Describe implements resourcelock.Interface.
func (l *gateLock) Describe() string {
	return "in-process gate of the embedding component's leader election"
}
