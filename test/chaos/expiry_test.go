package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

// TestLeaseExpiry_AWriteTakenAfterTheWritersLeaseExpiredIsAViolation: a leader's status
// write answered after the lease duration from the renewal a standby saw (the first of the
// last renewal's whole second) counts; one answered before, one straddling a SIGSTOP of the
// writer, and a write no leader must fence do not.
func TestLeaseExpiry_AWriteTakenAfterTheWritersLeaseExpiredIsAViolation(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const lease = "chaos-lease"
	renew := func(s float64) writelog.Entry {
		return writelog.Entry{Replica: "a", PID: 7, Method: "PUT", Path: "/apis/coordination.k8s.io/v1/namespaces/default/leases/" + lease,
			Code: 200, Sent: at(s), Time: at(s + 0.01), Holder: "a_1"}
	}
	write := func(path, method string, sent, answered float64) writelog.Entry {
		return writelog.Entry{Replica: "a", PID: 7, Method: method, Path: path, Code: 200, Sent: at(sent), Time: at(answered)}
	}
	status := "/apis/cache.multicache.dev/v1alpha1/namespaces/ns/reservations/r1/status"
	entries := []writelog.Entry{
		renew(0), renew(2), renew(2.7), // 2.7 s writes the record of 2 s: the lease runs from 2 s
		write(status, "PATCH", 3, 7.9),                                 // 2 + 6 s: in time
		write(status, "PATCH", 7, 8.5),                                 // late by 0.5 s
		write("/api/v1/namespaces/ns/events", "POST", 8, 8.2),          // late: an Event is a leader's write too
		write("/api/v1/namespaces/ns/pods/p1/binding", "POST", 9, 9.1), // not a leader's write
		write(status, "PATCH", 10, 20),                                 // straddles the pause below
	}
	pauses := []PauseWindow{{Replica: "a", Stopped: at(11), Continued: at(19)}}
	var got []string
	fail := func(check, format string, args ...any) { got = append(got, check+": "+fmt.Sprintf(format, args...)) }
	checked := checkLeaseExpiry(entries, lease, 6*time.Second, pauses, fail)
	if checked != 4 {
		t.Errorf("checked %d writes, want 4 (three status writes and the Event)", checked)
	}
	if len(got) != 1 {
		t.Fatalf("got %d violations, want 1: %q", len(got), got)
	}
	for _, want := range []string{"lease-expired", "replica a (pid 7)", "took 2 writes", "up to 500ms late"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q lacks %q", got[0], want)
		}
	}
}
