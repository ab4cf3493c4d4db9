package controllers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// scriptedAPI is an API server that answers every write with answer (called with the
// write's number, from 1) and every read with an empty Reservation, counting both.
type scriptedAPI struct {
	answer func(n int32, w http.ResponseWriter)
	writes atomic.Int32
	reads  atomic.Int32
}

func (a *scriptedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		a.reads.Add(1)
		_, _ = w.Write([]byte(`{"apiVersion":"cache.multicache.dev/v1alpha1","kind":"Reservation","metadata":{"namespace":"ns","name":"r"}}`))
		return
	}
	a.answer(a.writes.Add(1), w)
}

// ok answers a write with the Reservation.
func ok(_ int32, w http.ResponseWriter) {
	_, _ = w.Write([]byte(`{"apiVersion":"cache.multicache.dev/v1alpha1","kind":"Reservation","metadata":{"namespace":"ns","name":"r"}}`))
}

// fencedTestClient is a client of api whose transport asks fence, as the status writers'.
func fencedTestClient(t *testing.T, api http.Handler, fence Fence) client.Client {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	s := scheme.New()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(v1alpha1.GroupVersion.WithKind("Reservation"), meta.RESTScopeNamespace)
	c, err := client.New(fencedConfig(&rest.Config{Host: srv.URL}, fence), client.Options{Scheme: s, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fenceSwitch is a fence the test closes; while open, its lease's renew deadline is an hour
// away.
type fenceSwitch struct {
	mu  sync.Mutex
	err error
}

func (f *fenceSwitch) fence() (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Now().Add(time.Hour), f.err
}

func (f *fenceSwitch) close(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

var errLeaseGone = errors.New("not writing: this replica's lease may have passed to another (test)")

func expiring() *v1alpha1.Reservation {
	r := &v1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}}
	r.Status.Phase = v1alpha1.ReservationExpired
	return r
}

// TestFence_AWriteClientGoResendsAfterRetryAfterIsAskedAgain: the API server answers a status
// write 503 with "Retry-After: 1", and the fence closes before client-go resends it (as when
// the renew deadline passes meanwhile). The resend must not reach the server.
func TestFence_AWriteClientGoResendsAfterRetryAfterIsAskedAgain(t *testing.T) {
	f := &fenceSwitch{}
	api := &scriptedAPI{}
	api.answer = func(n int32, w http.ResponseWriter) {
		if n > 1 {
			ok(n, w)
			return
		}
		f.close(errLeaseGone) // the lease runs out while the server makes us wait
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`))
	}
	c := fencedTestClient(t, api, f.fence)
	err := c.Status().Update(context.Background(), expiring())
	if !errors.Is(err, errLeaseGone) {
		t.Errorf("the write returned %v, want the fence's error", err)
	}
	if n := api.writes.Load(); n != 1 {
		t.Errorf("the server saw %d writes, want 1: client-go's resend passed a closed fence", n)
	}
}

// TestFence_WritesPassWhileOpenAndAreRefusedUnsentOnceClosed: every kind of write goes
// through while the fence is open; once it is closed none reaches the server, each returns
// the fence's error, and reads still do.
func TestFence_WritesPassWhileOpenAndAreRefusedUnsentOnceClosed(t *testing.T) {
	f := &fenceSwitch{}
	api := &scriptedAPI{answer: ok}
	c := fencedTestClient(t, api, f.fence)
	ctx := context.Background()
	writes := map[string]func() error{
		"status update": func() error { return c.Status().Update(ctx, expiring()) },
		"status patch": func() error {
			return c.Status().Patch(ctx, expiring(), client.RawPatch("application/merge-patch+json", []byte(`{}`)))
		},
		"update": func() error { return c.Update(ctx, expiring()) },
		"create": func() error { return c.Create(ctx, expiring()) },
		"delete": func() error { return c.Delete(ctx, expiring()) },
	}
	for name, write := range writes {
		if err := write(); err != nil {
			t.Errorf("%s with the fence open: %v", name, err)
		}
	}
	if n := api.writes.Load(); n != int32(len(writes)) {
		t.Fatalf("the server saw %d writes with the fence open, want %d", n, len(writes))
	}
	f.close(errLeaseGone)
	for name, write := range writes {
		if err := write(); !errors.Is(err, errLeaseGone) || !strings.Contains(err.Error(), "lease may have passed") {
			t.Errorf("%s with the fence closed: %v, want the fence's error", name, err)
		}
	}
	if n := api.writes.Load(); n != int32(len(writes)) {
		t.Errorf("the server saw %d writes after the fence closed", n-int32(len(writes)))
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "r"}, &v1alpha1.Reservation{}); err != nil || api.reads.Load() != 1 {
		t.Errorf("a read with the fence closed: %v (server saw %d reads), want it sent", err, api.reads.Load())
	}
}

// stallingAPI holds every write it receives for stall before applying it, as an API server's
// priority-and-fairness queue does under load, unless the request ends first (its sender
// cancelled it: the connection or stream closed). It records what it saw.
type stallingAPI struct {
	stall     time.Duration
	received  atomic.Int32
	applied   atomic.Int32
	timeouts  chan string    // each write's ?timeout=
	cancelled chan time.Time // when a held write ended unapplied
}

func newStallingAPI(stall time.Duration) *stallingAPI {
	return &stallingAPI{stall: stall, timeouts: make(chan string, 10), cancelled: make(chan time.Time, 10)}
}

func (a *stallingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body) // once the body is read, the server hears the connection close
	a.received.Add(1)
	a.timeouts <- r.URL.Query().Get("timeout")
	select {
	case <-r.Context().Done():
		a.cancelled <- time.Now()
		return
	case <-time.After(a.stall):
	}
	a.applied.Add(1)
	w.Header().Set("Content-Type", "application/json")
	ok(0, w)
}

// TestFence_AWriteThatStallsPastTheRenewDeadlineIsCutThere: the fence lets a status write
// through 400 ms before the lease's renew deadline, and the API server holds it for 3 s. The
// write must end at the deadline, the server must see its request end then and apply
// nothing, and the request must tell the server the time left (?timeout=).
func TestFence_AWriteThatStallsPastTheRenewDeadlineIsCutThere(t *testing.T) {
	// The deadline leaves a starved machine time to send the write before it (else the
	// fence rightly sends nothing, TestFence_AnAttemptPastTheRenewDeadlineIsNotSent).
	const budget = 1500 * time.Millisecond
	api := newStallingAPI(6 * time.Second)
	until := time.Now().Add(budget)
	c := fencedTestClient(t, api, func() (time.Time, error) { return until, nil })
	err := c.Status().Update(context.Background(), expiring())
	returned := time.Now()
	if err == nil {
		t.Errorf("the stalled write succeeded %v after the renew deadline", returned.Sub(until))
	} else if !strings.Contains(err.Error(), errPastRenewDeadline.Error()) {
		t.Errorf("the write returned %v, want it cut at the renew deadline", err)
	}
	const slack = time.Second // far below the 6 s stall, room for a loaded machine
	if late := returned.Sub(until); late > slack {
		t.Errorf("the write returned %v after the renew deadline", late)
	}
	select {
	case at := <-api.cancelled:
		if late := at.Sub(until); late > slack {
			t.Errorf("the server saw the request end %v after the renew deadline", late)
		}
	case <-time.After(api.stall):
	}
	if n := api.applied.Load(); n != 0 {
		t.Errorf("the server applied %d writes after the writer's renew deadline", n)
	}
	if n := api.received.Load(); n != 1 {
		t.Fatalf("the server received %d writes, want 1", n)
	}
	if left, err := time.ParseDuration(<-api.timeouts); err != nil || left <= 0 || left > budget {
		t.Errorf("the request's ?timeout= is %v (%v), want the time left before the renew deadline", left, err)
	}
}

// TestFence_AnAttemptPastTheRenewDeadlineIsNotSent: the fence's deadline has passed by the
// time the attempt reaches the transport (the process paused between the check and the send,
// as the fence's own clock may read it): nothing reaches the server.
func TestFence_AnAttemptPastTheRenewDeadlineIsNotSent(t *testing.T) {
	api := newStallingAPI(0)
	c := fencedTestClient(t, api, func() (time.Time, error) { return time.Now().Add(-time.Millisecond), nil })
	if err := c.Delete(context.Background(), expiring()); !errors.Is(err, errPastRenewDeadline) {
		t.Errorf("the write returned %v, want the fence's deadline error", err)
	}
	if n := api.received.Load(); n != 0 {
		t.Errorf("the server received %d writes past the renew deadline", n)
	}
}
