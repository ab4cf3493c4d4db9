package operator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// BenchmarkTakeover_AfterTheLeaderStops measures, against the real API server, how long
// after the leader's lease expired a standby took it over, with client-go's elector over
// fencedLock (as the operator runs it): the leader stops renewing (as after kill -9), and
// the time is from its last renewal plus the lease duration to the standby leading. Three
// standbys side by side: "watch-at-expiry" is the operator's (the Lease watched, the
// take-over at the expiry), "at-expiry" waits for the expiry as the elector's polls saw it
// (fencedLock.takeOverAtExpiry), "polling" only polls, as client-go does. The operator's
// default timings: lease 15 s, renew deadline 10 s, retry period 2 s. Run (about 20 s per
// iteration):
//
//	go test -run '^$' -bench BenchmarkTakeover_AfterTheLeaderStops -benchtime 5x ./internal/operator
func BenchmarkTakeover_AfterTheLeaderStops(b *testing.B) {
	const lease, renew, retry = defaultLeaseDuration, defaultRenewDeadline, defaultRetryPeriod
	ns := newNamespace(b)
	for _, variant := range []struct {
		name  string
		retry time.Duration // the standby lock's retry period: 0 turns waiting for the expiry off
		watch bool
	}{{"watch-at-expiry", retry, true}, {"at-expiry", retry, false}, {"polling", 0, false}} {
		b.Run(variant.name, func(b *testing.B) {
			var late []time.Duration
			i := 0
			for b.Loop() {
				name := fmt.Sprintf("takeover-%s-%d", variant.name, i)
				i++
				leader, err := newFencedLock(env.Config, ns, name, renew, retry)
				if err != nil {
					b.Fatal(err)
				}
				leaderCtx, stopLeader := context.WithCancel(context.Background())
				led := make(chan struct{})
				go runElector(leaderCtx, b, leader, lease, renew, retry, func() { close(led) })
				<-led
				standby, err := newFencedLock(env.Config, ns, name, renew, variant.retry)
				if err != nil {
					b.Fatal(err)
				}
				standbyCtx, stopStandby := context.WithCancel(context.Background())
				if variant.watch {
					go func() { _ = standby.watch.Start(standbyCtx) }()
				}
				took := make(chan time.Time, 1)
				go runElector(standbyCtx, b, standby, lease, renew, retry, func() { took <- time.Now() })
				// Let the standby see a few renewals, then stop the leader without releasing,
				// at a moment that varies with the iteration against the renewals' rhythm.
				time.Sleep(3*retry + time.Duration(i)*retry/3)
				stopLeader()
				at := <-took
				stopStandby()
				leader.mu.Lock()
				last := leader.lastRenew
				leader.mu.Unlock()
				late = append(late, at.Sub(last.Add(lease)))
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Milliseconds()), "ms-after-expiry-median")
			b.ReportMetric(float64(late[len(late)-1].Milliseconds()), "ms-after-expiry-max")
		})
	}
}

// runElector runs client-go's elector on lock until ctx is done, calling started when it
// leads. It does not release the lease on stopping (a killed process does not).
func runElector(ctx context.Context, b *testing.B, lock *fencedLock, lease, renew, retry time.Duration, started func()) {
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { started() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		b.Error(err)
		return
	}
	le.Run(ctx)
}
