package chaos

import (
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

func TestFailoverWrite_FromTheLastRenewalsSecondToTheFirstWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	lease := "/apis/coordination.k8s.io/v1/namespaces/default/leases/mc"
	entries := []writelog.Entry{
		{Replica: "a", Method: "PUT", Path: lease, Code: 200, Sent: at(1), Time: at(1.01), Holder: "a_1"},
		{Replica: "a", Method: "PUT", Path: lease, Code: 200, Sent: at(2), Time: at(2.01), Holder: "a_1"},
		// Sent before the kill, answered after: the API applied it. Its renewTime (whole
		// seconds) is the one sent at 2 s: a standby saw no change, the lease counts from 2 s.
		{Replica: "a", Method: "PUT", Path: lease, Code: 200, Sent: at(2.9), Time: at(3.2), Holder: "a_1"},
		// The standby's writes before the kill, a refused write and a non-guarded one do not count.
		{Replica: "b", Method: "PATCH", Path: "/apis/cache.multicache.dev/v1alpha1/namespaces/ns/reservations/r/status", Code: 200, Sent: at(2.5), Time: at(2.6)},
		{Replica: "b", Method: "PATCH", Path: "/apis/cache.multicache.dev/v1alpha1/namespaces/ns/reservations/r/status", Code: 409, Sent: at(9), Time: at(9.1)},
		{Replica: "b", Method: "POST", Path: "/api/v1/namespaces/ns/events", Code: 201, Sent: at(9), Time: at(9.2)},
		{Replica: "b", Method: "PUT", Path: lease, Code: 200, Sent: at(9.3), Time: at(9.35), Holder: "b_1"},
		{Replica: "b", Method: "PATCH", Path: "/apis/cache.multicache.dev/v1alpha1/namespaces/ns/podgroups/g/status", Code: 200, Sent: at(9.5), Time: at(9.6)},
		{Replica: "b", Method: "DELETE", Path: "/apis/cache.multicache.dev/v1alpha1/namespaces/ns/reservations/x", Code: 200, Sent: at(9.4), Time: at(9.45)},
	}
	kill := &FaultResult{Kind: KillLeader.Kind, killed: "a", killedAt: at(3)}
	other := &FaultResult{Kind: APIRestart.Kind}
	failoverWrite(entries, []*FaultResult{kill, other}, "mc", 6*time.Second)
	// The lease last seen changed at 2 s expires at 8 s; the first guarded write answered at
	// 9.45 s.
	if want := 1450 * time.Millisecond; !kill.failoverKnown || kill.FailoverWrite != want {
		t.Fatalf("failover %v (known %v), want %v", kill.FailoverWrite, kill.failoverKnown, want)
	}
	if other.failoverKnown {
		t.Fatal("a fault other than kill -9 of the leader got a failover figure")
	}
	if s := failoverSummary([]*FaultResult{kill, other}); s == "" {
		t.Fatal("no failover line in the report")
	}
}
