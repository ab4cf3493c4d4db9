package operator

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a resourcelock.Interface whose writes succeed (after moving the clock by
// delay, as a request in flight while the process is paused) and whose Get reads holder.
type fakeLock struct {
	resourcelock.Interface
	id     string
	holder string
	clock  *fakeClock
	delay  time.Duration
}

func (f *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return &resourcelock.LeaderElectionRecord{HolderIdentity: f.holder}, nil, nil
}
func (f *fakeLock) Create(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	return f.Update(context.Background(), ler)
}
func (f *fakeLock) Update(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	f.clock.now = f.clock.now.Add(f.delay)
	f.holder = ler.HolderIdentity
	return nil
}
func (f *fakeLock) Identity() string { return f.id }
func (f *fakeLock) Describe() string { return "ns/lease" }

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// newFakeRenewalLock is a renewalLock over a fakeLock, with a renew deadline of 10 s.
func newFakeRenewalLock(delay time.Duration) (*renewalLock, *fakeLock, *fakeClock) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	inner := &fakeLock{id: "me", clock: clk, delay: delay}
	return &renewalLock{Interface: inner, renewDeadline: 10 * time.Second, now: clk.Now}, inner, clk
}

func wantFenceError(t *testing.T, l *renewalLock, when, want string) {
	t.Helper()
	if _, err := l.Fence(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: fence says %v, want an error containing %q", when, err, want)
	}
}

func TestRenewalLock_TheFenceIsOpenOnlyWithinTheRenewDeadlineOfTheLastRenewal(t *testing.T) {
	l, inner, clk := newFakeRenewalLock(0)
	ctx := context.Background()
	wantFenceError(t, l, "before acquiring", "not writing: this replica does not hold the leader-election lease ns/lease")
	if err := l.Create(ctx, mine(clk)); err != nil {
		t.Fatal(err)
	}
	acquired := clk.now
	if until, err := l.Fence(); err != nil || !until.Equal(acquired.Add(10*time.Second)) {
		t.Errorf("just acquired: open until %v (%v), want the renew deadline from the acquisition, %v", until, err, acquired.Add(10*time.Second))
	}
	clk.now = clk.now.Add(10 * time.Second)
	if _, err := l.Fence(); err != nil {
		t.Errorf("at the renew deadline: %v", err)
	}
	clk.now = clk.now.Add(time.Millisecond) // as after SIGSTOP: nothing renewed since
	wantFenceError(t, l, "past the renew deadline",
		"not writing: this replica's lease ns/lease may have passed to another (last renewal sent 10.001s ago, renew deadline 10s)")
	if err := l.Update(ctx, mine(clk)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Fence(); err != nil {
		t.Errorf("renewed: %v", err)
	}
	inner.holder = "other" // another replica took the lease over
	if _, _, err := l.Get(ctx); err != nil {
		t.Fatal(err)
	}
	wantFenceError(t, l, "having read another holder, within the renew deadline", "does not hold")
	inner.holder = "me"
	if err := l.Update(ctx, mine(clk)); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{}); err != nil { // released on exit
		t.Fatal(err)
	}
	wantFenceError(t, l, "released", "does not hold")
}

// mine is the record the elector writes to renew the lease as "me" now.
func mine(clk *fakeClock) resourcelock.LeaderElectionRecord {
	return resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15,
		AcquireTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), RenewTime: metav1.NewTime(clk.now)}
}

// TestRenewalLock_ARenewalAStandbyCannotSeeDoesNotMoveTheFence: the record's times carry
// whole seconds, so a renewal in the second of the last one writes a record a standby cannot
// tell from it, and its lease runs from the first: so does the fence. The next second's
// renewal moves it.
func TestRenewalLock_ARenewalAStandbyCannotSeeDoesNotMoveTheFence(t *testing.T) {
	l, _, clk := newFakeRenewalLock(0)
	ctx := context.Background()
	for _, c := range []struct {
		at, openFrom time.Duration
	}{{100 * time.Millisecond, 100 * time.Millisecond}, {800 * time.Millisecond, 100 * time.Millisecond},
		{1200 * time.Millisecond, 1200 * time.Millisecond}, {1700 * time.Millisecond, 1200 * time.Millisecond}} {
		clk.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(c.at)
		if err := l.Update(ctx, mine(clk)); err != nil {
			t.Fatal(err)
		}
		want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(c.openFrom + 10*time.Second)
		if until, err := l.Fence(); err != nil || !until.Equal(want) {
			t.Errorf("renewed at %v: open until %v (%v), want %v", c.at, until, err, want)
		}
	}
}

// TestRenewalLock_ARenewalCountsFromWhenItWasSent: a renewal answered only after the renew
// deadline (the process was paused with the request in flight) does not open the fence.
func TestRenewalLock_ARenewalCountsFromWhenItWasSent(t *testing.T) {
	l, _, _ := newFakeRenewalLock(10*time.Second + time.Millisecond)
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	wantFenceError(t, l, "renewal answered 10.001s after it was sent", "last renewal sent 10.001s ago")
}

// record is a lease record of holder.
func record(holder string, seconds int) resourcelock.LeaderElectionRecord {
	now := metav1.Now()
	return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: seconds, AcquireTime: now, RenewTime: now}
}

// TestRenewalLock_AStaleLeaderNeitherRenewsNorEmptiesItsSuccessorsLease, through the real API
// server: a replica whose lease passed to another while it was cut off tries to renew it (the
// LeaseLock writes over the lease it last read: a conflict, the fence stays shut) and to
// release it (a record naming nobody over another's lease: not written). The lease stays the
// successor's. If client-go's LeaseLock stopped writing conditionally on the resourceVersion it
// read, the stale renewal would succeed here and the test fail.
func TestRenewalLock_AStaleLeaderNeitherRenewsNorEmptiesItsSuccessorsLease(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	stale, err := newRenewalLock(env.Config, ns, "stale", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	successor, err := newRenewalLock(env.Config, ns, "stale", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Create(ctx, record(stale.Identity(), 1)); err != nil {
		t.Fatal(err)
	}
	// The stale leader's lease expired; the successor takes it over.
	if _, _, err := successor.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := successor.Update(ctx, record(successor.Identity(), 15)); err != nil {
		t.Fatal(err)
	}
	acquired := stale.lastRenew
	if err := stale.Update(ctx, record(stale.Identity(), 1)); !apierrors.IsConflict(err) {
		t.Errorf("the stale leader's renewal over the lease it read before the take-over: %v, want a conflict", err)
	}
	if stale.lastRenew != acquired {
		t.Error("a failed renewal moved the fence")
	}
	// It reads the successor's lease, then writes a record naming nobody.
	if _, _, err := stale.Get(ctx); err != nil {
		t.Fatal(err)
	}
	wantFenceError(t, stale, "having read the successor's lease", "does not hold")
	if err := stale.Update(ctx, record("", 1)); err != nil {
		t.Fatal(err)
	}
	if got, _, err := successor.Get(ctx); err != nil || got.HolderIdentity != successor.Identity() {
		t.Errorf("after the stale leader's release the lease is held by %q (%v), want the successor %q", got.HolderIdentity, err, successor.Identity())
	}
	// The holder's own release still empties the lease.
	if err := successor.Update(ctx, record("", 1)); err != nil {
		t.Fatal(err)
	}
	if got, _, err := stale.Get(ctx); err != nil || got.HolderIdentity != "" {
		t.Errorf("after the holder's release: holder %q, err %v; want empty", got.HolderIdentity, err)
	}
	wantFenceError(t, successor, "the successor, released", "does not hold")
}
