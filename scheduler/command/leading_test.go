package command

import (
	"context"
	"errors"
	"testing"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a lock whose writes fail while fail is set.
type fakeLock struct {
	fail error
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return nil, nil, errors.New("not used")
}
func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) RecordEvent(string)                                              {}
func (l *fakeLock) Identity() string                                                { return "me" }
func (l *fakeLock) Describe() string                                                { return "fake" }

func leads(s *leaderSignal) bool {
	select {
	case <-s.C():
		return true
	default:
		return false
	}
}

// TestLeaderSignal_ClosesOnceThisReplicaHoldsTheLock: a failed write, or a write naming
// another holder (a release, an observed record), does not signal; the first successful
// write naming this replica does, and later ones change nothing.
func TestLeaderSignal_ClosesOnceThisReplicaHoldsTheLock(t *testing.T) {
	ctx := context.Background()
	s := newLeaderSignal()
	inner := &fakeLock{fail: errors.New("conflict")}
	lock := s.Watch(inner)
	_ = lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if leads(s) {
		t.Fatal("signalled after a failed create")
	}
	inner.fail = nil
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "other"})
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{})
	if leads(s) {
		t.Fatal("signalled for a record this replica does not hold")
	}
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil || !leads(s) {
		t.Fatalf("not signalled after holding the lock (err %v)", err)
	}
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	s.Lead() // closing twice must not panic
}
