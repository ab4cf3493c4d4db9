package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// renewalLock is client-go's Lease lock (resourcelock.New), handed to controller-runtime's
// elector through manager.Options.LeaderElectionResourceLockInterface, that remembers when
// this replica last wrote itself into the lease. It relies only on what the lock's methods
// mean: a successful Create or Update of a record naming this replica means the lease was
// this replica's when the request was sent, and a Get that names another holder (or none)
// means it is not. Fence opens the status writers' transport on that.
type renewalLock struct {
	resourcelock.Interface
	renewDeadline time.Duration
	// now is the clock (tests replace it); time.Now's monotonic reading is not fooled by a
	// change of the wall clock.
	now func() time.Time

	mu sync.Mutex
	// lastRenew is when the first successful write of the record this replica wrote last
	// was sent; zero when this replica does not hold the lease (never did, released it, or
	// read another holder).
	lastRenew time.Time
	// lastRecord is that record as JSON, as a standby compares it.
	lastRecord []byte
	// lastReadHolder is the holder of the lease as last read or successfully written.
	lastReadHolder string
}

// newRenewalLock builds the Lease lock the way controller-runtime does (identity
// "<hostname>_<uuid>", a client timeout of half the renew deadline). Its client is not
// fenced: it is how the fence opens.
func newRenewalLock(cfg *rest.Config, namespace, name string, renewDeadline time.Duration) (*renewalLock, error) {
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
	return &renewalLock{Interface: lock, renewDeadline: renewDeadline, now: time.Now}, nil
}

// Get implements resourcelock.Interface. A record naming another holder, or none, closes the
// fence at once: whatever this replica believed, the lease is not its own.
func (l *renewalLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ler, raw, err := l.Interface.Get(ctx)
	if err == nil && ler != nil {
		l.mu.Lock()
		l.lastReadHolder = ler.HolderIdentity
		if ler.HolderIdentity != l.Identity() {
			l.lastRenew, l.lastRecord = time.Time{}, nil
		}
		l.mu.Unlock()
	}
	return ler, raw, err
}

// Create implements resourcelock.Interface, remembering an acquisition.
func (l *renewalLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := l.now()
	err := l.Interface.Create(ctx, ler)
	l.written(err, ler, sent)
	return err
}

// Update implements resourcelock.Interface, remembering a renewal or a release. It does not
// write a record naming another holder, or none, over a lease it last read held by another
// replica: that would take the lease from its holder without this replica acquiring it (a
// leader that lost its lease while cut off, releasing on exit, would empty its successor's
// lease). Such a write is reported done: the lease is not this replica's either way.
func (l *renewalLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	if ler.HolderIdentity != l.Identity() && l.lastReadHolder != "" && l.lastReadHolder != l.Identity() {
		l.lastRenew = time.Time{}
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	sent := l.now()
	err := l.Interface.Update(ctx, ler)
	l.written(err, ler, sent)
	return err
}

// written remembers a successful write of the lease. A renewal counts from when it was sent,
// not from when its answer came: the API server may have applied it just before this process
// was paused, and the answer be read after the pause, when another replica has long taken
// over (the chaos suite saw 295 writes so). And it counts only when a standby can see it: a
// standby's lease runs from when it saw the record change, and the record's times carry
// whole seconds (client-go compares it as JSON), so a renewal that writes the record this
// replica wrote last (one in the same second) leaves the fence counting from the first.
func (l *renewalLock) written(err error, ler resourcelock.LeaderElectionRecord, sent time.Time) {
	if err != nil {
		return
	}
	record, _ := json.Marshal(ler)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ler.HolderIdentity != l.Identity():
		l.lastRenew, record = time.Time{}, nil
	case l.lastRenew.IsZero() || !bytes.Equal(record, l.lastRecord):
		l.lastRenew = sent
	}
	l.lastRecord = record
	l.lastReadHolder = ler.HolderIdentity
}

// Fence returns nil while this replica holds the lease and sent its last successful renewal
// less than the renew deadline ago, with the moment that renewal's renew deadline passes;
// the status writers' transport asks it before every attempt of every write and cuts the
// attempt there. The renew deadline is shorter than the lease duration another replica
// waits out, from when it saw that renewal, before it takes over.
func (l *renewalLock) Fence() (time.Time, error) {
	l.mu.Lock()
	last := l.lastRenew
	l.mu.Unlock()
	if last.IsZero() {
		return time.Time{}, fmt.Errorf("not writing: this replica does not hold the leader-election lease %s", l.Describe())
	}
	if since := l.now().Sub(last); since > l.renewDeadline {
		return time.Time{}, fmt.Errorf("not writing: this replica's lease %s may have passed to another (last renewal sent %s ago, renew deadline %s)",
			l.Describe(), since.Round(time.Millisecond), l.renewDeadline)
	}
	return last.Add(l.renewDeadline), nil
}
