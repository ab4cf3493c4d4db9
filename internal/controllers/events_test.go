package controllers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed0f91f25e/multicache/internal/scheme"
)

// eventsAPI is an API server that takes every write of an Event, counting them, and answers
// nothing else.
type eventsAPI struct{ posted atomic.Int32 }

func (a *eventsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, "/events") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	a.posted.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// TestEvents_AReplicaWithoutTheLeaseEmitsNone: the recorder the writers get from NewRecorder,
// on a running manager, sends Events while the fence is open, and none once it is closed (a
// standby, a leader past its renew deadline).
func TestEvents_AReplicaWithoutTheLeaseEmitsNone(t *testing.T) {
	api := &eventsAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	mgr, err := ctrl.NewManager(&rest.Config{Host: srv.URL}, ctrl.Options{Scheme: scheme.New(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fenceSwitch{}
	rec, err := NewRecorder(mgr, f.fence)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// While leading: the broadcaster runs and sends.
	deadline := time.Now().Add(10 * time.Second)
	for api.posted.Load() == 0 && time.Now().Before(deadline) {
		rec.Eventf(expiring(), nil, "Normal", "Expired", "PhaseChange", "recorded by the leader")
		time.Sleep(100 * time.Millisecond)
	}
	if api.posted.Load() == 0 {
		t.Fatalf("the leader's Events were not sent")
	}
	time.Sleep(300 * time.Millisecond)
	sent := api.posted.Load()

	// Without the lease: an Event of another reason (not folded into the series above).
	f.close(errLeaseGone)
	rec.Eventf(expiring(), nil, "Warning", "Standby", "PhaseChange", "recorded without the lease")
	time.Sleep(500 * time.Millisecond) // the broadcaster sent the leader's within milliseconds
	if n := api.posted.Load() - sent; n != 0 {
		t.Errorf("a replica without the lease sent %d Events", n)
	}
}
