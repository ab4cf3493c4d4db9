package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// env is the real kube-apiserver and etcd shared by the tests of this package.
var env *testsupport.Env

func TestMain(m *testing.M) {
	// The operators' logs go to stderr only when asked: MULTICACHE_TEST_LOGS=true.
	if os.Getenv("MULTICACHE_TEST_LOGS") == "true" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	testsupport.RunMain(m, &env)
}

// running is an operator started by startOperator.
type running struct {
	*Operator
	cancel  context.CancelFunc
	done    chan error
	stopped sync.Once
}

// stop stops the operator and waits for it (once: later calls return at once).
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.stopped.Do(func() { r.waitStopped(t) })
}

func (r *running) waitStopped(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("operator stopped with %v", err)
		}
		select {
		case <-r.Cache.Config().StopCh():
		case <-time.After(10 * time.Second):
			t.Error("the stores' StopCh is still open 10 s after the operator stopped")
		}
	case <-time.After(time.Minute):
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("operator did not stop within a minute; goroutines:\n%s", stacks.String())
	}
}

// startOperator runs an operator in-process against the test API server, with test-friendly
// options (no network listeners but an ephemeral debug server, fast housekeeping), changed
// by mutate, and waits until its informers synced.
func startOperator(t *testing.T, mutate ...func(*Options)) *running {
	t.Helper()
	return startOperatorOn(t, env, mutate...)
}

// startOperatorOn is startOperator against another control plane than the package's.
func startOperatorOn(t *testing.T, e *testsupport.Env, mutate ...func(*Options)) *running {
	t.Helper()
	opts := DefaultOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0", "127.0.0.1:0"
	opts.LowFreeThreshold = 0
	opts.Period = 100 * time.Millisecond
	opts.SkipControllerNameValidation = true
	for _, m := range mutate {
		m(&opts)
	}
	op, err := New(e.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Operator: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	eventually(t, "the operator's informers sync", func() (bool, string) { return op.Ready(), "not ready" })
	return r
}

// eventually polls cond until it holds, failing after 60 seconds with cond's last message.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testsupport.Eventually(t, what, time.Minute, 20*time.Millisecond, cond)
}

// consistent waits until the operator's cache equals the API (the compare endpoint's view).
func consistent(t *testing.T, op *running) {
	t.Helper()
	eventually(t, "the cache equals the API", func() (bool, string) {
		diffs, err := op.Debug.Compare(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return len(diffs) == 0, fmt.Sprintf("%+v", diffs)
	})
}

var namespaces atomic.Int32

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%s", namespaces.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-")))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// eventCount reads multicache_events_total for a kind, op and result.
func eventCount(t *testing.T, kind, op, result string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.EventsTotal.WithLabelValues(kind, op, result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// rejectedCount sums multicache_events_total of a kind over every result but "ok".
func rejectedCount(t *testing.T, kind string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 256)
	go func() { metrics.EventsTotal.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["kind"] == kind && labels["result"] != "ok" {
			total += d.GetCounter().GetValue()
		}
	}
	return total
}

func ctx() context.Context { return context.Background() }

func ownerKeyOf(ns, name string) store.OwnerKey {
	return store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: name}
}

// cacheDump is the document the operator's debug server would serve, decoded.
func cacheDump(t testing.TB, op *running) *debug.Dump {
	t.Helper()
	var raw bytes.Buffer
	if err := op.Cache.WriteDump(ctx(), &raw, handler.DumpCompact); err != nil {
		t.Fatal(err)
	}
	d := &debug.Dump{}
	if err := json.Unmarshal(raw.Bytes(), d); err != nil {
		t.Fatal(err)
	}
	return d
}
