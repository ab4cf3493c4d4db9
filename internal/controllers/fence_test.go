package controllers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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
func fencedTestClient(t *testing.T, api http.Handler, fence func() error) client.Client {
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

// fenceSwitch is a fence the test closes.
type fenceSwitch struct {
	mu  sync.Mutex
	err error
}

func (f *fenceSwitch) fence() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
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
