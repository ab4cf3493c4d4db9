package command

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaderSignal tells the plugin when this replica starts leading: kube-scheduler's
// election is the process's only one, and multicache's leader-only work follows it.
type leaderSignal struct {
	once sync.Once
	ch   chan struct{}
}

func newLeaderSignal() *leaderSignal { return &leaderSignal{ch: make(chan struct{})} }

// C is closed once this replica leads.
func (s *leaderSignal) C() <-chan struct{} { return s.ch }

// Lead closes C (leader election off: the one replica leads).
func (s *leaderSignal) Lead() { s.once.Do(func() { close(s.ch) }) }

// Watch wraps the scheduler's lock: the first record this replica writes holding the lock
// (acquired or renewed) closes C. Losing the lock needs no signal: kube-scheduler exits.
func (s *leaderSignal) Watch(lock resourcelock.Interface) resourcelock.Interface {
	return &watchedLock{Interface: lock, signal: s}
}

// watchedLock is a resourcelock.Interface that reports successful writes of its holder.
type watchedLock struct {
	resourcelock.Interface
	signal *leaderSignal
}

// Create implements resourcelock.Interface.
func (l *watchedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, ler)
	l.observe(err, ler)
	return err
}

// Update implements resourcelock.Interface.
func (l *watchedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, ler)
	l.observe(err, ler)
	return err
}

func (l *watchedLock) observe(err error, ler resourcelock.LeaderElectionRecord) {
	if err == nil && ler.HolderIdentity != "" && ler.HolderIdentity == l.Identity() {
		l.signal.Lead()
	}
}
