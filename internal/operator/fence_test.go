package operator

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestFencedLock_AStaleLeaderDoesNotReleaseItsSuccessorsLease replays, through the real API
// server, what client-go's release on exit (tryRelease, v0.37.1) does in a leader that lost
// its lease while paused: it reads the lease (now another replica's), decides on the record
// it observed before, and writes an empty holder. The lease must stay the successor's.
func TestFencedLock_AStaleLeaderDoesNotReleaseItsSuccessorsLease(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	stale, err := newFencedLock(env.Config, ns, "fenced-release", time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	successor, err := newFencedLock(env.Config, ns, "fenced-release", time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	if err := stale.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: stale.Identity(),
		LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now}); err != nil {
		t.Fatal(err)
	}
	// The stale leader's lease expired; the successor takes it over.
	if _, _, err := successor.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := successor.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: successor.Identity(),
		LeaseDurationSeconds: 15, AcquireTime: now, RenewTime: now, LeaderTransitions: 1}); err != nil {
		t.Fatal(err)
	}
	// The stale leader exits: tryRelease reads, then writes the empty record.
	if _, _, err := stale.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stale.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now}); err != nil {
		t.Fatal(err)
	}
	got, _, err := successor.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.HolderIdentity != successor.Identity() {
		t.Errorf("after the stale leader's release the lease is held by %q, want the successor %q", got.HolderIdentity, successor.Identity())
	}
	if err := stale.Fence(); err == nil {
		t.Error("the stale leader may still write after its release")
	}
	// The holder's own release still empties the lease.
	if err := successor.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := stale.Get(ctx); err != nil || got.HolderIdentity != "" {
		t.Errorf("after the holder's release: holder %q, err %v; want empty", got.HolderIdentity, err)
	}
}

// slowLock is a resourcelock.Interface whose writes succeed after a delay, as a renewal the
// API server applied just before this process was paused, answered after the pause.
type slowLock struct {
	fakeLock
	delay time.Duration
}

func (s slowLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	time.Sleep(s.delay)
	return nil
}

// TestFencedLock_ARenewalCountsFromWhenItWasSent: a renewal answered only after the renew
// deadline (the process was SIGSTOPped with the request in flight) does not open the fence.
func TestFencedLock_ARenewalCountsFromWhenItWasSent(t *testing.T) {
	l := &fencedLock{Interface: slowLock{fakeLock{id: "me"}, 250 * time.Millisecond}, renewDeadline: 200 * time.Millisecond}
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fence(); err == nil || !strings.Contains(err.Error(), "past the renew deadline") {
		t.Errorf("after a renewal answered 250ms after it was sent (renew deadline 200ms): %v", err)
	}
}
