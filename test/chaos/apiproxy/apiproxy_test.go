package apiproxy

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// upstream counts the requests that reach it; /watch streams one line per 20 ms.
func upstream(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.URL.Query().Get("watch") == "true" {
			for i := range 5 {
				fmt.Fprintf(w, "event %d\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &reached
}

func start(t *testing.T, host string) *Proxy {
	p, err := Start(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestProxy_APartitionHoldsRequestsUntilItHeals: nothing reaches the API server while the
// path is down; the request goes through once it heals.
func TestProxy_APartitionHoldsRequestsUntilItHeals(t *testing.T) {
	srv, reached := upstream(t)
	p := start(t, srv.URL)
	p.Partition()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(p.URL()+"/api/v1/namespaces/ns/pods", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d requests reached the API server through a partition", n)
	}
	p.Heal()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := reached.Load(); n != 1 {
		t.Fatalf("%d requests reached the API server after the heal, want 1", n)
	}
}

// TestProxy_LateWatchesDeliverEveryEventInOrder: a watch held back loses nothing and keeps
// the order; its first event comes no sooner than the delay.
func TestProxy_LateWatchesDeliverEveryEventInOrder(t *testing.T) {
	srv, _ := upstream(t)
	p := start(t, srv.URL)
	const delay = 300 * time.Millisecond
	p.LateWatches(delay)
	sent := time.Now()
	resp, err := http.Get(p.URL() + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []string
	var first time.Duration
	for sc.Scan() {
		if first == 0 {
			first = time.Since(sent)
		}
		got = append(got, sc.Text())
	}
	if want := "event 0,event 1,event 2,event 3,event 4"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
	if first < delay {
		t.Errorf("the first event came after %v, before the delay %v", first, delay)
	}
}

// TestProxy_SlowWritesLeaveReadsAndLeasesAlone: only writes other than the lease's wait.
func TestProxy_SlowWritesLeaveReadsAndLeasesAlone(t *testing.T) {
	for path, method := range map[string]string{
		"/api/v1/namespaces/ns/pods": http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l": http.MethodPut,
		"/api/v1/pods": http.MethodGet,
	} {
		r := httptest.NewRequest(method, path, nil)
		if got, want := isWrite(r), method == http.MethodPost; got != want {
			t.Errorf("%s %s: slowed %v, want %v", method, path, got, want)
		}
	}
}
