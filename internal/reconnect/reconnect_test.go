package reconnect

import (
	"context"
	"errors"
	goio "io"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	corev1 "k8s.io/api/core/v1"
)

// scriptedLW answers each List and Watch with the next error of errs, then succeeds.
type scriptedLW struct {
	errs  []error
	calls int
}

func (s *scriptedLW) next() error {
	s.calls++
	if s.calls <= len(s.errs) {
		return s.errs[s.calls-1]
	}
	return nil
}

func (s *scriptedLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	if err := s.next(); err != nil {
		return nil, err
	}
	return &corev1.PodList{}, nil
}

func (s *scriptedLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	if err := s.next(); err != nil {
		return nil, err
	}
	return watch.NewFake(), nil
}

// refused is what a client sees while the API server is down.
var refused = &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/pods", Err: syscall.ECONNREFUSED}

// newLW wraps s, recording the waits instead of sleeping.
func newLW(s *scriptedLW, waits *[]time.Duration) *ListerWatcher {
	return &ListerWatcher{LW: s, Patience: time.Hour, Type: "Pod", Log: logr.Discard(),
		sleep: func(ctx context.Context, d time.Duration) error {
			*waits = append(*waits, d)
			return ctx.Err()
		}}
}

func TestListerWatcher_AnUnreachableAPIServerIsRetriedWithoutReturningTheError(t *testing.T) {
	errs := []error{refused, refused, refused, refused, refused, refused, eofMidway(), refused}
	s := &scriptedLW{errs: errs}
	var waits []time.Duration
	lw := newLW(s, &waits)
	if _, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("the watch returned %v; want it retried until the API server answers", err)
	}
	if s.calls != len(errs)+1 || len(waits) != len(errs) {
		t.Fatalf("%d calls, %d waits; want %d and %d", s.calls, len(waits), len(errs)+1, len(errs))
	}
	for i, w := range waits {
		// From 200 ms growing by half, jittered by up to a fifth, never past the interval's.
		if w < firstWait || w > time.Second*6/5 {
			t.Errorf("wait %d: %v, want within [%v, %v]", i, w, firstWait, time.Second*6/5)
		}
	}
	if waits[len(waits)-1] < time.Second {
		t.Errorf("the waits did not grow to the interval: %v", waits)
	}
}

// eofMidway is a connection the API server closed while it stopped.
func eofMidway() error {
	return &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/pods", Err: goio.ErrUnexpectedEOF}
}

func TestListerWatcher_TheServersRetryAfterIsHonoured(t *testing.T) {
	busy := apierrors.NewTooManyRequests("watch cache initialising", 3)
	unavailable := apierrors.NewServiceUnavailable("not ready")
	s := &scriptedLW{errs: []error{busy, unavailable}}
	var waits []time.Duration
	if _, err := newLW(s, &waits).ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 2 || waits[0] != 3*time.Second || waits[1] < firstWait || waits[1] > time.Second {
		t.Fatalf("waits %v; want 3s as asked, then the first wait", waits)
	}
}

func TestListerWatcher_AnErrorWaitingCannotCureIsReturnedAtOnce(t *testing.T) {
	for _, err := range []error{
		apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no RBAC")),
		apierrors.NewResourceExpired("too old resource version"),
		apierrors.NewBadRequest("bad selector"),
		// A custom resource's API a restarted API server has not loaded yet: the reflector
		// backs off as client-go has it (docs/RELIABILITY.md, "Coming back with the API server").
		apierrors.NewNotFound(schema.GroupResource{Group: "cache.multicache.dev", Resource: "reservations"}, ""),
	} {
		s := &scriptedLW{errs: []error{err}}
		var waits []time.Duration
		if _, got := newLW(s, &waits).WatchWithContext(context.Background(), metav1.ListOptions{}); got != err {
			t.Errorf("%v: returned %v", err, got)
		}
		if s.calls != 1 || len(waits) != 0 {
			t.Errorf("%v: %d calls, waits %v; want one call, no wait", err, s.calls, waits)
		}
	}
}

func TestListerWatcher_AfterPatienceTheErrorIsReturned(t *testing.T) {
	s := &scriptedLW{errs: []error{refused, refused}}
	var waits []time.Duration
	lw := newLW(s, &waits)
	lw.Patience = time.Nanosecond
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("returned %v; want the refused connection once patience ran out", err)
	}
	if s.calls != 1 {
		t.Fatalf("%d calls after patience ran out", s.calls)
	}
}

func TestListerWatcher_AStoppedInformerStopsWaiting(t *testing.T) {
	s := &scriptedLW{errs: []error{refused, refused, refused}}
	lw := &ListerWatcher{LW: s, Patience: DefaultPatience, Log: logr.Discard()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("returned %v, want the context's cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait went on after the informer stopped")
	}
}

// TestListerWatcher_BackFromUnreachableItWaitsForTheAPIServerToBeReady: after a refused
// connection the next call waits until Ready says the API server is ready; an answer of the
// server (429) does not ask Ready.
func TestListerWatcher_BackFromUnreachableItWaitsForTheAPIServerToBeReady(t *testing.T) {
	s := &scriptedLW{errs: []error{refused, apierrors.NewTooManyRequests("busy", 1)}}
	var waits []time.Duration
	lw := newLW(s, &waits)
	var asked, callsWhenReady []int
	lw.Ready = func(context.Context) error {
		asked = append(asked, s.calls)
		if len(asked) <= 2 {
			return apierrors.NewInternalError(errors.New("[-]poststarthook/crd-informer-synced failed"))
		}
		callsWhenReady = append(callsWhenReady, s.calls)
		return nil
	}
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.calls != 3 {
		t.Fatalf("%d calls, want 3 (refused, 429, served)", s.calls)
	}
	if len(asked) != 3 || len(callsWhenReady) != 1 || callsWhenReady[0] != 1 {
		t.Errorf("Ready asked after calls %v, ready after %v; want asked three times after the refused call, ready the third", asked, callsWhenReady)
	}
	if len(waits) != 4 || waits[3] != time.Second {
		t.Errorf("waits %v; want three while not ready, then the 1 s the 429 asked", waits)
	}
}
