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
// renewalLock (as the operator runs it): the leader stops renewing (as after kill -9), and
// the time is from when its last renewal was sent plus the lease duration to the standby
// leading. Lease 15 s and renew deadline 10 s; retry period the operator's 500 ms, and
// controller-runtime's 2 s for comparison. Run (about 20 s per iteration):
//
//	go test -run '^$' -bench BenchmarkTakeover_AfterTheLeaderStops -benchtime 8x ./internal/operator
func BenchmarkTakeover_AfterTheLeaderStops(b *testing.B) {
	const lease, renew = defaultLeaseDuration, defaultRenewDeadline
	ns := newNamespace(b)
	for _, retry := range []time.Duration{defaultRetryPeriod, 2 * time.Second} {
		b.Run("retry-"+retry.String(), func(b *testing.B) {
			var late []time.Duration
			i := 0
			for b.Loop() {
				name := fmt.Sprintf("takeover-%d-%d", retry.Milliseconds(), i)
				i++
				leader, err := newRenewalLock(env.Config, ns, name, renew)
				if err != nil {
					b.Fatal(err)
				}
				leaderCtx, stopLeader := context.WithCancel(context.Background())
				led := make(chan struct{})
				go runElector(leaderCtx, b, leader, lease, renew, retry, func() { close(led) })
				<-led
				standby, err := newRenewalLock(env.Config, ns, name, renew)
				if err != nil {
					b.Fatal(err)
				}
				standbyCtx, stopStandby := context.WithCancel(context.Background())
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
			b.Logf("after expiry, sorted: %v", late)
			b.ReportMetric(float64(late[len(late)/2].Milliseconds()), "ms-after-expiry-median")
			b.ReportMetric(float64(late[len(late)-1].Milliseconds()), "ms-after-expiry-max")
		})
	}
}

// runElector runs client-go's elector on lock until ctx is done, calling started when it
// leads. It does not release the lease on stopping (a killed process does not).
func runElector(ctx context.Context, b *testing.B, lock *renewalLock, lease, renew, retry time.Duration, started func()) {
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
