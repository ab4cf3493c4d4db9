package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// APIServer reads what the cluster's kube-apiserver and etcd spend: their CPU from
// /proc/<pid>/stat (both are children of this process: envtest starts them) and the API
// server's request metrics from its own /metrics, read as an administrator.
type APIServer struct {
	// APIServerPid and EtcdPid are the processes' ids.
	APIServerPid, EtcdPid int
	metricsURL            string
	client                *http.Client
}

// apiServerFamilies are the metric families a snapshot reads (the name[] filter of the API
// server's handler, client_golang's promhttp, keeps the answer small; the histograms'
// buckets are dropped when parsed).
var apiServerFamilies = []string{
	"apiserver_request_total",
	"apiserver_request_duration_seconds",
	"apiserver_watch_events_total",
	"apiserver_watch_events_sizes",
	"apiserver_watch_list_duration_seconds",
	"apiserver_longrunning_requests",
}

// apiServerSeries are the series of those families a snapshot keeps.
var apiServerSeries = []string{
	"apiserver_request_total{",
	"apiserver_request_duration_seconds_sum{",
	"apiserver_watch_events_total{",
	"apiserver_watch_events_sizes_sum{",
	"apiserver_watch_list_duration_seconds_sum{",
	"apiserver_watch_list_duration_seconds_count{",
	"apiserver_longrunning_requests{",
}

// NewAPIServer finds the kube-apiserver and etcd processes this process started and
// builds the client that reads the API server's metrics with cfg's credentials.
func NewAPIServer(cfg *rest.Config) (*APIServer, error) {
	children, err := childProcesses(os.Getpid())
	if err != nil {
		return nil, err
	}
	a := &APIServer{APIServerPid: children["kube-apiserver"], EtcdPid: children["etcd"]}
	if a.APIServerPid == 0 || a.EtcdPid == 0 {
		return nil, fmt.Errorf("kube-apiserver and etcd are not both children of this process (found %v)", children)
	}
	if a.client, err = rest.HTTPClientFor(cfg); err != nil {
		return nil, err
	}
	a.metricsURL = harness.FilterURL(strings.TrimSuffix(cfg.Host, "/")+"/metrics", apiServerFamilies...)
	return a, nil
}

// childProcesses returns the pid of each direct child of parent, by command name.
func childProcesses(parent int) (map[string]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range stats {
		name, fields, err := procStat(p) // fields[1] is the parent's pid
		if err != nil || len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue // not a child, or it ended meanwhile
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			out[name] = pid
		}
	}
	return out, nil
}

// APISnapshot is what the API server and etcd had spent at one moment.
type APISnapshot struct {
	At                    time.Time
	APIServerCPU, EtcdCPU time.Duration
	Metrics               harness.Metrics
}

// CPU reads the two processes' CPU time now, without the metrics.
func (a *APIServer) CPU() (APISnapshot, error) {
	s := APISnapshot{At: time.Now()}
	var err error
	if s.APIServerCPU, err = ReadCPU(a.APIServerPid); err != nil {
		return s, fmt.Errorf("kube-apiserver's CPU: %w", err)
	}
	if s.EtcdCPU, err = ReadCPU(a.EtcdPid); err != nil {
		return s, fmt.Errorf("etcd's CPU: %w", err)
	}
	return s, nil
}

// Metrics reads the API server's request metrics into s.
func (a *APIServer) Metrics(ctx context.Context, s *APISnapshot) error {
	body, err := harness.GetWith(ctx, a.client, a.metricsURL, harness.RequestTimeout)
	if err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	s.Metrics = harness.ParseMetrics(body, apiServerSeries...)
	return nil
}

// Before is the snapshot that opens a window: the metrics, then the CPU (the scrape's own
// cost stays out of the window).
func (a *APIServer) Before(ctx context.Context) (APISnapshot, error) {
	var m APISnapshot
	if err := a.Metrics(ctx, &m); err != nil {
		return m, err
	}
	s, err := a.CPU()
	s.Metrics = m.Metrics
	return s, err
}

// After is the snapshot that closes a window: the CPU, then the metrics.
func (a *APIServer) After(ctx context.Context) (APISnapshot, error) {
	s, err := a.CPU()
	if err != nil {
		return s, err
	}
	return s, a.Metrics(ctx, &s)
}

// Pause sleeps d and returns the API server's CPU over it, in cores (-1 when it could not be
// read): the idle rate NetAPIServerCPU takes off a start's window.
func (a *APIServer) Pause(d time.Duration) float64 {
	before, err := a.CPU()
	if err != nil || d <= 0 {
		time.Sleep(d)
		return -1
	}
	time.Sleep(d)
	after, err := a.CPU()
	if err != nil {
		return -1
	}
	return (after.APIServerCPU - before.APIServerCPU).Seconds() / after.At.Sub(before.At).Seconds()
}
