package operator

import (
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// elected reports whether an operator leads.
func elected(op *running) bool {
	select {
	case <-op.Manager.Elected():
		return true
	default:
		return false
	}
}

// TestLeaderElection_OnlyTheLeaderWritesStatusAndTheStandbyTakesOverWarm runs two operators
// with leader election. Both feed their caches; only the leader writes status (each writes
// its own component name into Movement status). When the leader stops, the standby takes
// over, and its cache already holds everything before it leads.
func TestLeaderElection_OnlyTheLeaderWritesStatusAndTheStandbyTakesOverWarm(t *testing.T) {
	ns := newNamespace(t)
	lease := func(name string) func(*Options) {
		return func(o *Options) {
			o.LeaderElect, o.LeaderElectionID, o.LeaderElectionNamespace = true, "lease-"+ns, ns
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = ptr.To(3*time.Second), ptr.To(2*time.Second), ptr.To(200*time.Millisecond)
			o.ComponentName = name
		}
	}
	a := startOperator(t, lease("mc-a"))
	eventually(t, "a leads", func() (bool, string) { return elected(a), "not elected" })
	b := startOperator(t, lease("mc-b"))

	movement := "lead-" + ns
	create(t, withoutUID(ts.MakeNode("lead-node", "8", "16Gi")),
		ts.MakeMovement(movement, v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "web"}, "lead-node", 1))
	notified := func(want ...string) func() (bool, string) {
		return func() (bool, string) {
			m := &v1alpha1.Movement{}
			if err := env.Client.Get(ctx(), types.NamespacedName{Name: movement}, m); err != nil {
				return false, err.Error()
			}
			return slices.Equal(m.Status.NotifiedSchedulers, want), fmt.Sprintf("%v", m.Status.NotifiedSchedulers)
		}
	}
	eventually(t, "the leader wrote status", notified("mc-a"))
	// The standby's cache is warm: it holds what the leader's holds, without leading.
	consistent(t, b)
	if _, ok := b.Cache.Movement(movement); !ok || elected(b) {
		t.Fatalf("standby: movement cached %v, elected %v; want cached and not elected", ok, elected(b))
	}
	if _, ok := b.Cache.NodeInfo("lead-node"); !ok {
		t.Fatal("the standby's cache misses the node")
	}
	time.Sleep(time.Second) // room for a wrong write by the standby
	if ok, got := notified("mc-a")(); !ok {
		t.Fatalf("the standby wrote status while not leading: %s", got)
	}

	a.stop(t)
	eventually(t, "b takes over", func() (bool, string) { return elected(b), "not elected" })
	eventually(t, "the new leader writes status", notified("mc-a", "mc-b"))
}

// TestLeaderElection_ALeaderThatFindsTheLeaseTakenStopsWritingThenExits gives the lease of a
// leading operator to another holder, as a replica that took over while this one was paused
// would. Its fence closes at its next read of the lease, and the stock elector gives up
// after its renew deadline: controller-runtime's manager returns an error (the process exits
// and restarts as a standby).
func TestLeaderElection_ALeaderThatFindsTheLeaseTakenStopsWritingThenExits(t *testing.T) {
	ns := newNamespace(t)
	a := startLeader(t, ns, 3*time.Second, 2*time.Second, 200*time.Millisecond)
	eventually(t, "a's fence opens", func() (bool, string) {
		_, err := a.lock.Fence()
		return err == nil, fmt.Sprint(err)
	})

	// The leader renews every 200 ms: retry on its conflicting writes.
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		lease := &coordinationv1.Lease{}
		if err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "lease-" + ns}, lease); err != nil {
			return err
		}
		taken := metav1.NewMicroTime(time.Now())
		lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.AcquireTime = ptr.To("another-replica"), &taken, &taken
		lease.Spec.LeaseDurationSeconds = ptr.To[int32](60)
		return env.Client.Update(ctx(), lease)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's fence closes", func() (bool, string) {
		_, err := a.lock.Fence()
		return err != nil, "open"
	})
	select {
	case err := <-a.done:
		a.done <- nil // what the cleanup's stop waits for
		if err == nil {
			t.Fatal("the operator stopped without an error: the process would not restart")
		}
	case <-time.After(time.Minute):
		t.Fatal("the operator still runs although another replica holds its lease")
	}
	if got := ptr.Deref(leaseIn(t, ns).Spec.HolderIdentity, ""); got != "another-replica" {
		t.Errorf("after the old leader exited the lease is held by %q, want another-replica's (not released by the old leader)", got)
	}
}

// TestLeaderElection_TheElectorUsesTheOptionsTimings: controller-runtime's documentation of
// LeaderElectionResourceLockInterface says the manager's LeaseDuration, RenewDeadline and
// RetryPeriod are ignored with a lock of one's own; its code passes them to client-go's
// elector all the same, and the operator relies on that. The lease duration the elector
// writes into the Lease shows which it runs with.
func TestLeaderElection_TheElectorUsesTheOptionsTimings(t *testing.T) {
	ns := newNamespace(t)
	startLeader(t, ns, 7*time.Second, 5*time.Second, 300*time.Millisecond)
	if got := ptr.Deref(leaseIn(t, ns).Spec.LeaseDurationSeconds, 0); got != 7 {
		t.Errorf("the elector wrote a lease duration of %ds, want the options' 7s (controller-runtime's default is 15s)", got)
	}
}

// startLeader starts an operator electing on the lease "lease-<ns>" in ns with the timings
// given, and waits until it leads.
func startLeader(t *testing.T, ns string, lease, renew, retry time.Duration) *running {
	t.Helper()
	op := startOperator(t, func(o *Options) {
		o.LeaderElect, o.LeaderElectionID, o.LeaderElectionNamespace = true, "lease-"+ns, ns
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = &lease, &renew, &retry
	})
	eventually(t, "the operator leads", func() (bool, string) { return elected(op), "not elected" })
	return op
}

// leaseIn reads the Lease startLeader's operator elects on.
func leaseIn(t *testing.T, ns string) *coordinationv1.Lease {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "lease-" + ns}, lease); err != nil {
		t.Fatal(err)
	}
	return lease
}
