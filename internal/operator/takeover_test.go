package operator

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// scriptedLock is a resourcelock.Interface whose Get answers the records given, the last one
// again once they run out.
type scriptedLock struct {
	resourcelock.Interface
	id      string
	records []resourcelock.LeaderElectionRecord
	gets    int
}

func (s *scriptedLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r := s.records[min(s.gets, len(s.records)-1)]
	s.gets++
	raw, err := json.Marshal(r)
	return &r, raw, err
}
func (s *scriptedLock) Identity() string { return s.id }
func (s *scriptedLock) Describe() string { return "ns/lease" }

// fakeTime is a clock the lock's pauses move.
type fakeTime struct {
	now    time.Time
	paused []time.Duration
	cancel bool
}

func (f *fakeTime) Now() time.Time { return f.now }
func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	f.paused = append(f.paused, d)
	if f.cancel {
		return context.Canceled
	}
	f.now = f.now.Add(d)
	return nil
}

// held is a lease record of holder; renewals differ in their transitions count.
func held(holder string, renewal int) resourcelock.LeaderElectionRecord {
	return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: 6, LeaderTransitions: renewal}
}

// TestFencedLock_AStandbyTakesOverAtTheExpiry drives a standby's Get (lease 6 s, retry period
// 1 s, so the elector's tries are at most 2.2 s apart) through what it may meet.
func TestFencedLock_AStandbyTakesOverAtTheExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		id      string
		records []resourcelock.LeaderElectionRecord
		// readAt is when, after the record was first read at t0, the elector's try comes.
		readAt     time.Duration
		cancel     bool
		wantPaused []time.Duration
		wantHolder string
	}{
		{"expiry before the next try: waits for it, then the lease is free", "standby",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, 4 * time.Second, false, []time.Duration{2 * time.Second}, ""},
		{"renewed while waiting: held", "standby",
			[]resourcelock.LeaderElectionRecord{held("leader", 1), held("leader", 1), held("leader", 2)}, 4 * time.Second, false,
			[]time.Duration{2 * time.Second}, "leader"},
		{"expiry after the next try: no wait", "standby",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, time.Second, false, nil, "leader"},
		{"expired already: free at once", "standby",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, 7 * time.Second, false, nil, ""},
		{"stopping while waiting: held, at once", "standby",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, 4 * time.Second, true, []time.Duration{2 * time.Second}, "leader"},
		{"the leader's own lease: never waits", "leader",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, 5 * time.Second, false, nil, "leader"},
		{"a free lease: as read", "standby",
			[]resourcelock.LeaderElectionRecord{held("", 1)}, 5 * time.Second, false, nil, ""},
		{"led, then lost: never waits (stopping)", "lost",
			[]resourcelock.LeaderElectionRecord{held("leader", 1)}, 4 * time.Second, false, nil, "leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeTime{now: t0, cancel: tc.cancel}
			inner := &scriptedLock{id: tc.id, records: tc.records}
			l := &fencedLock{Interface: inner, renewDeadline: 5 * time.Second, retryPeriod: time.Second, now: clk.Now, sleep: clk.Sleep, lost: make(chan struct{})}
			if tc.id == "lost" {
				close(l.lost)
			}
			ctx := context.Background()
			if _, _, err := l.get(ctx); err != nil { // first seen at t0
				t.Fatal(err)
			}
			clk.now = t0.Add(tc.readAt)
			ler, _, err := l.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ler.HolderIdentity != tc.wantHolder {
				t.Errorf("holder %q, want %q", ler.HolderIdentity, tc.wantHolder)
			}
			if len(clk.paused) != len(tc.wantPaused) || (len(tc.wantPaused) > 0 && clk.paused[0] != tc.wantPaused[0]) {
				t.Errorf("paused %v, want %v", clk.paused, tc.wantPaused)
			}
			if got := l.lastReadHolder; tc.records[0].HolderIdentity != "" && got == "" {
				t.Errorf("remembered holder %q: the lock must remember the real holder, not the one it hands the elector", got)
			}
		})
	}
}

// TestLeaseWatch_AStandbySeesEachRenewalWithoutPolling: through the real API server, a
// standby whose elector does not poll learns of each renewal of the leader from the watch
// of the Lease (the record it would read, first seen when it was written), so its view of
// the expiry is not one poll late.
func TestLeaseWatch_AStandbySeesEachRenewalWithoutPolling(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t)
	leader, err := newFencedLock(env.Config, ns, "watched", 10*time.Second, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	standby, err := newFencedLock(env.Config, ns, "watched", 10*time.Second, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- standby.watch.Start(ctx) }()
	for renewal := range 3 {
		rec := resourcelock.LeaderElectionRecord{HolderIdentity: leader.Identity(), LeaseDurationSeconds: 15,
			AcquireTime: metav1.NewTime(time.Unix(1e9, 0)), RenewTime: metav1.NewTime(time.Unix(1e9+int64(renewal), 0))}
		if renewal == 0 {
			err = leader.Create(ctx, rec)
		} else {
			_, _, err = leader.Get(ctx) // the LeaseLock writes over the lease it read last
			if err == nil {
				err = leader.Update(ctx, rec)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rec)
		eventually(t, "the standby sees renewal "+strconv.Itoa(renewal), func() (bool, string) {
			standby.mu.Lock()
			defer standby.mu.Unlock()
			return string(standby.seenRaw) == string(want), "seen " + string(standby.seenRaw)
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the watch ended with %v", err)
	}
}
