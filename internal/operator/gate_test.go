package operator

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// TestGateLock_TheElectorLeadsOnlyOnceTheEmbeddingComponentLeads: client-go's elector,
// the one controller-runtime runs, waits on a closed gate and acquires the lock at its next
// retry once the gate opens.
func TestGateLock_TheElectorLeadsOnlyOnceTheEmbeddingComponentLeads(t *testing.T) {
	leading := make(chan struct{})
	started := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          newGateLock(leading, "test", 15*time.Second),
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 20 * time.Millisecond,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(started) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go elector.Run(ctx)

	select {
	case <-started:
		t.Fatal("led while the embedding component did not")
	case <-time.After(300 * time.Millisecond):
	}
	close(leading)
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("did not lead within 5s of the embedding component leading")
	}
	if !elector.IsLeader() {
		t.Error("IsLeader is false after OnStartedLeading")
	}
}

// TestValidate_AnEmbeddedOperatorRefusesItsOwnElection: one election per process.
func TestValidate_AnEmbeddedOperatorRefusesItsOwnElection(t *testing.T) {
	o := DefaultOptions()
	o.LeaderElect, o.Leading = true, make(chan struct{})
	if err := o.Validate(); err == nil {
		t.Error("Validate accepted --leader-elect with Leading")
	}
}
