package operator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/seed0f91f25e/multicache/internal/reconnect"
)

// defaultRenewDeadline is controller-runtime's, used when Options.RenewDeadline is nil.
const defaultRenewDeadline = 10 * time.Second

// fencedLock is the Lease lock of leader election that remembers when this replica last
// renewed it. Leader election only learns it lost the lease when a renewal fails; a process
// paused past its lease (SIGSTOP, a frozen VM) resumes believing it leads, with reconciles
// in flight. Fence refuses writes unless the lease was renewed within the renew deadline
// (shorter than the lease duration another replica waits out before it takes over).
type fencedLock struct {
	resourcelock.Interface
	renewDeadline time.Duration
	// retryPeriod is the elector's: its tries come 1 to 2.2 retry periods apart. Zero turns
	// the take-over at expiry off (see Get).
	retryPeriod time.Duration
	// watch keeps seenAt current between the elector's polls; the operator runs it.
	watch *leaseWatch
	// now and sleep are the clock (tests replace them).
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu sync.Mutex
	// seenRaw is the lease record as last read (by Get or the leaseWatch), first seen at
	// seenAt (by this replica's monotonic clock): the lease expires, by this replica's
	// observation, a lease duration after seenAt unless the record changes.
	seenRaw   []byte
	seenAt    time.Time
	lastRenew time.Time
	// lastReadHolder is the holder of the lease as last read from the API server.
	lastReadHolder string
	// lost is closed when this replica, having led, reads the lease held by another
	// (lostOnce guards it): see Lost.
	lost     chan struct{}
	lostOnce sync.Once
}

// newFencedLock builds the Lease lock the way controller-runtime does (identity
// "<hostname>_<uuid>", a client timeout of half the renew deadline).
func newFencedLock(cfg *rest.Config, namespace, name string, renewDeadline, retryPeriod time.Duration) (*fencedLock, error) {
	if namespace == "" {
		b, err := os.ReadFile(inClusterNamespaceFile)
		if err != nil {
			return nil, fmt.Errorf("finding the leader-election namespace: set --leader-election-namespace (%w)", err)
		}
		namespace = strings.TrimSpace(string(b))
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader-election identity: %w", err)
	}
	c := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	c.Timeout = max(renewDeadline/2, time.Second)
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("leader-election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, err
	}
	l := &fencedLock{Interface: lock, renewDeadline: renewDeadline, retryPeriod: retryPeriod, lost: make(chan struct{})}
	if l.watch, err = newLeaseWatch(cfg, l, namespace, name); err != nil {
		return nil, err
	}
	return l, nil
}

// Lost is closed once this replica, after leading, read the lease held by another replica.
// client-go's elector would go on retrying its renewal until the renew deadline (10 s by
// default) before it gave up leading; a replica paused past its lease (SIGSTOP, a frozen
// VM) learns at its first read after it resumes that it lost, and stops then (the operator
// exits, as it does when the elector gives up, and restarts as a standby).
func (l *fencedLock) Lost() <-chan struct{} { return l.lost }

// Create implements resourcelock.Interface, remembering an acquisition.
func (l *fencedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Create(ctx, ler)
	l.record(err, ler, sent)
	return err
}

// Get implements resourcelock.Interface, remembering the holder it read. For a standby it
// also takes over at the expiry rather than up to two polls after it (see takeOverAtExpiry).
func (l *fencedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ler, raw, err := l.get(ctx)
	if err != nil || ler == nil || l.retryPeriod <= 0 || ler.HolderIdentity == "" || ler.HolderIdentity == l.Identity() {
		return ler, raw, err
	}
	select {
	case <-l.lost:
		// Led, then lost: the operator is stopping (client-go's release on exit reads the
		// lease too), and a replica that lost its lease does not take it back.
		return ler, raw, err
	default:
	}
	return l.takeOverAtExpiry(ctx, ler, raw)
}

// get reads the lease, remembering the holder and when this record was first seen.
func (l *fencedLock) get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ler, raw, err := l.Interface.Get(ctx)
	if err == nil && ler != nil {
		l.mu.Lock()
		l.lastReadHolder = ler.HolderIdentity
		ledBefore := !l.lastRenew.IsZero()
		l.seenLocked(raw)
		l.mu.Unlock()
		if ledBefore && ler.HolderIdentity != "" && ler.HolderIdentity != l.Identity() {
			l.lostOnce.Do(func() { close(l.lost) })
		}
	}
	return ler, raw, err
}

// takeOverAtExpiry: client-go's elector tries to take the lease over every 1 to 2.2 retry
// periods, and judges it expired with the time it read before the lease, so a standby took
// over up to 2.2 retry periods after the lease expired. When the lease, held by another
// replica, expires before the elector's next try could come, this waits for the expiry,
// reads the lease again and, if it is still the record first seen a lease duration ago,
// returns it with no holder: the elector then writes it at once. The rule is client-go's own
// (a record unchanged for its lease duration, by this replica's clock since it first saw it),
// only applied when it becomes true; the write is conditional on the lease's
// resourceVersion, so a renewal that lands in between makes it fail.
func (l *fencedLock) takeOverAtExpiry(ctx context.Context, ler *resourcelock.LeaderElectionRecord, raw []byte) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.mu.Lock()
	expiry := l.seenAt.Add(time.Duration(ler.LeaseDurationSeconds) * time.Second)
	l.mu.Unlock()
	wait := expiry.Sub(l.clock())
	if wait > maxElectorWait(l.retryPeriod) {
		return ler, raw, nil // the elector's next try comes first
	}
	if wait > 0 {
		if err := l.pause(ctx, wait); err != nil {
			return ler, raw, nil // stopping: the elector sees ctx done
		}
		var err error
		if ler, raw, err = l.get(ctx); err != nil || ler == nil || ler.HolderIdentity == "" || ler.HolderIdentity == l.Identity() {
			return ler, raw, err
		}
		l.mu.Lock()
		expiry = l.seenAt.Add(time.Duration(ler.LeaseDurationSeconds) * time.Second)
		l.mu.Unlock()
		if l.clock().Before(expiry) {
			return ler, raw, nil // renewed meanwhile
		}
	}
	free := *ler
	free.HolderIdentity = ""
	return &free, raw, nil
}

// maxElectorWait is the longest client-go's elector waits between two tries (wait.Jitter
// with leaderelection.JitterFactor).
func maxElectorWait(retryPeriod time.Duration) time.Duration {
	return time.Duration(float64(retryPeriod) * (1 + leaderelection.JitterFactor))
}

func (l *fencedLock) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

func (l *fencedLock) pause(ctx context.Context, d time.Duration) error {
	if l.sleep != nil {
		return l.sleep(ctx, d)
	}
	return reconnect.Sleep(ctx, d)
}

// Update implements resourcelock.Interface, remembering a renewal (or a release). A release
// (an empty holder) of a lease that another replica holds is not written: client-go's
// release on exit (LeaderElectionReleaseOnCancel) reads the lease, then decides on the
// record it observed before, so a leader that lost the lease while it was paused or
// partitioned would empty its successor's lease, and for a moment nobody would lead. The
// read just before the release is fresh: the lock writes with its resourceVersion, so a
// takeover after it makes the release conflict and be retried from a new read.
func (l *fencedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" {
		l.mu.Lock()
		holder := l.lastReadHolder
		l.mu.Unlock()
		if holder != l.Identity() {
			l.record(nil, ler, time.Now()) // not ours: nothing to release, and no longer leading
			return nil
		}
	}
	sent := time.Now()
	err := l.Interface.Update(ctx, ler)
	l.record(err, ler, sent)
	return err
}

// record remembers a successful write of the lease. A renewal counts from when it was
// sent, not from when its answer came: the API server may have applied it just before this
// process was paused, and the answer be read after the pause, when another replica has long
// taken over (the chaos suite saw 295 writes so).
func (l *fencedLock) record(err error, ler resourcelock.LeaderElectionRecord, sent time.Time) {
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ler.HolderIdentity == l.Identity() {
		l.lastRenew = sent // monotonic: a pause does not fool it
	} else {
		l.lastRenew = time.Time{} // released
	}
}

// Fence returns nil while this replica renewed its lease within the renew deadline.
func (l *fencedLock) Fence() error {
	l.mu.Lock()
	last := l.lastRenew
	l.mu.Unlock()
	if last.IsZero() {
		return fmt.Errorf("not writing: this replica does not hold the leader-election lease %s", l.Describe())
	}
	if since := time.Since(last); since >= l.renewDeadline {
		return fmt.Errorf("not writing: the lease %s was last renewed %s ago, past the renew deadline %s (paused?); another replica may lead",
			l.Describe(), since.Round(time.Millisecond), l.renewDeadline)
	}
	return nil
}
