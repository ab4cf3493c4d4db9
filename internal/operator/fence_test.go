package operator

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a resourcelock.Interface that accepts every write.
type fakeLock struct {
	resourcelock.Interface
	id string
}

func (f fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (f fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (f fakeLock) Identity() string                                                { return f.id }
func (f fakeLock) Describe() string                                                { return "ns/lease" }

func TestFencedLock_WritesOnlyWhileTheLeaseWasRenewedWithinTheRenewDeadline(t *testing.T) {
	l := &fencedLock{Interface: fakeLock{id: "me"}, renewDeadline: 200 * time.Millisecond}
	ctx := context.Background()
	if err := l.Fence(); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("before acquiring: %v", err)
	}
	if err := l.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fence(); err != nil {
		t.Errorf("just acquired: %v", err)
	}
	// A pause past the renew deadline, as after SIGSTOP: nothing renewed since.
	time.Sleep(250 * time.Millisecond)
	if err := l.Fence(); err == nil || !strings.Contains(err.Error(), "past the renew deadline") {
		t.Errorf("after a pause: %v", err)
	}
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fence(); err != nil {
		t.Errorf("renewed: %v", err)
	}
	// Released on shutdown (or someone else's record written): no longer ours.
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: ""}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fence(); err == nil {
		t.Error("writes allowed after the lease was released")
	}
}
