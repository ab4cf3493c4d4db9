package operator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func TestSubCluster_WatchesOnlyItsNodesAndThePodsBoundToThem(t *testing.T) {
	podGroupWritesBefore := reconcileCount(t, "podgroup-status")
	op := startOperator(t, func(o *Options) { o.SubClusterKey, o.SubCluster = "multicache.dev/shard", "a" })
	ns := newNamespace(t)
	create(t,
		withoutUID(ts.MakeNode("shard-a-1", "8", "16Gi", "multicache.dev/shard", "a")),
		withoutUID(ts.MakeNode("shard-b-1", "8", "16Gi", "multicache.dev/shard", "b")),
		withoutUID(ts.MakePod(ns, "on-a", ts.OnNode("shard-a-1"))),
		withoutUID(ts.MakePod(ns, "on-b", ts.OnNode("shard-b-1"))),
		withoutUID(ts.MakePod(ns, "unbound")),
	)
	consistent(t, op) // the comparison applies the same scope
	if _, ok := op.Cache.NodeInfo("shard-b-1"); ok {
		t.Error("a node of another sub-cluster is cached")
	}
	if _, ok := op.Cache.NodeInfo("shard-a-1"); !ok {
		t.Error("the sub-cluster's node is not cached")
	}
	for name, want := range map[string]bool{"on-a": true, "on-b": false, "unbound": false} {
		if _, ok := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: name}); ok != want {
			t.Errorf("pod %s cached: %v, want %v", name, ok, want)
		}
	}
	if d := cacheDump(t, op); d.SubCluster != "multicache.dev/shard=a" {
		t.Errorf("dump says sub-cluster %q", d.SubCluster)
	}

	// Reservations are kept only on the sub-cluster's nodes.
	create(t, ts.MakeReservation(ns, "on-a", "shard-a-1", "1", "1Gi"), ts.MakeReservation(ns, "on-b", "shard-b-1", "1", "1Gi"),
		ts.MakeReservation(ns, "pending", "", "1", "1Gi"), ts.MakePodGroup(ns, "shard-gang", 1))
	consistent(t, op)
	for name, want := range map[string]bool{"on-a": true, "on-b": false, "pending": false} {
		if _, ok := op.Cache.Reservation(types.NamespacedName{Namespace: ns, Name: name}); ok != want {
			t.Errorf("reservation %s cached: %v, want %v", name, ok, want)
		}
	}

	// A pod a scheduler assumed onto the sub-cluster is not dropped because the API, which
	// has not bound it yet, reports it (unbound, so out of scope) in the meantime.
	waiting := withoutUID(ts.MakePod(ns, "waiting"))
	create(t, waiting)
	assumed := waiting.DeepCopy()
	assumed.Spec.NodeName = "shard-a-1"
	if err := op.Cache.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	waiting.Labels = map[string]string{"touched": "yes"}
	if err := env.Client.Update(ctx(), waiting); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // room for the reconcile of the update
	if st, ok := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: "waiting"}); !ok || st.State != store.PodAssumed {
		t.Errorf("the assumed pod after an API update: %+v %v, want still Assumed", st, ok)
	}
	if _, ok := op.Cache.PodGroup(types.NamespacedName{Namespace: ns, Name: "shard-gang"}); !ok {
		t.Error("the pod group is not cached")
	}
	if reconcileCount(t, "podgroup-status") != podGroupWritesBefore {
		t.Error("a sub-cluster ran the pod group status writer, which needs the whole cluster")
	}
}

func TestDisabledStores_TheirKindsAreNotWatched(t *testing.T) { disabledStoresAreNotWatched(t, false) }

func TestDisabledStores_TheirKindsAreNotWatchedInASubCluster(t *testing.T) {
	disabledStoresAreNotWatched(t, true)
}

func disabledStoresAreNotWatched(t *testing.T, shard bool) {
	op := startOperator(t, func(o *Options) {
		o.Stores = []string{"podgroups"}
		if shard {
			o.SubClusterKey, o.SubCluster = "multicache.dev/disabled-test", "s0"
		}
	})
	ns := newNamespace(t)
	create(t, ts.MakeReservation(ns, "ignored", "", "1", "1Gi", "app", "web"), ts.MakePodGroup(ns, "watched", 1))
	eventually(t, "the pod group is cached", func() (bool, string) {
		_, ok := op.Cache.PodGroup(types.NamespacedName{Namespace: ns, Name: "watched"})
		return ok, "not cached"
	})
	if got := op.Cache.StoreNames(); !slices.Equal(got, []stores.Name{"nodes", "podgroups", "pods"}) {
		t.Errorf("stores %v", got)
	}
	if slices.Contains(op.Cache.WatchedKinds(), stores.KindReservation) {
		t.Error("reservations are watched with the reservation store disabled")
	}
	time.Sleep(300 * time.Millisecond) // room for a wrong reconcile
	r := &v1alpha1.Reservation{}
	if err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "ignored"}, r); err != nil || r.Status.Phase != "" {
		t.Errorf("a reservation got status with its store disabled: %v %+v", err, r.Status)
	}
	// Not even opened: an informer lists and watches whether or not a feed reads it (an
	// index on a kind opens one too).
	for _, typ := range op.opened.list() {
		switch typ {
		case "*v1alpha1.Reservation", "*v1.ResourceSlice", "*v1.ResourceClaim", "*v1.DeviceClass", "*v1.PodDisruptionBudget":
			t.Errorf("the informer of %s was opened with its stores disabled (opened: %v)", typ, op.opened.list())
		}
	}
}

// reconcileCount reads controller-runtime's reconcile counter of one controller.
func reconcileCount(t *testing.T, controllerName string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controllerName {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

func TestDebugServer_DumpNodeCompareAndPprof(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("debug-node", "8", "16Gi")),
		withoutUID(ts.MakePod(ns, "p", ts.OnNode("debug-node"), ts.Requests("1", "1Gi"))),
		ts.MakeReservation(ns, "r", "debug-node", "1", "1Gi", "app", "web"))
	consistent(t, op)
	srv := httptest.NewServer(op.Debug.Handler())
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}

	code, body := get("/debug/cache")
	var dump struct {
		Stores       []string                                `json:"stores"`
		Nodes        map[string]map[string]any               `json:"nodes"`
		Pods         map[string]struct{ Node, State string } `json:"pods"`
		PodGroups    map[string]any                          `json:"podGroups"`
		PDBs         map[string]any                          `json:"pdbs"`
		Movements    map[string]any                          `json:"movements"`
		Reservations map[string]struct{ Phase, Node string } `json:"reservations"`
	}
	if err := json.Unmarshal(body, &dump); code != 200 || err != nil {
		t.Fatalf("/debug/cache: %d %v", code, err)
	}
	if want := []string{"nodes", "podgroups", "pdbs", "movements", "reservations", "devices", "pods"}; !slices.Equal(dump.Stores, want) {
		t.Errorf("stores %v, want %v", dump.Stores, want)
	}
	node := dump.Nodes["debug-node"]
	for _, field := range []string{"allocatable", "requested", "bestEffortAllocatable", "pods"} {
		if _, ok := node[field]; !ok {
			t.Errorf("node dump has no %s: %v", field, node)
		}
	}
	if p := dump.Pods[ns+"/p"]; p.Node != "debug-node" || p.State != "Added" {
		t.Errorf("pod dump %+v", p)
	}
	if r := dump.Reservations[ns+"/r"]; r.Phase != "Reserved" || r.Node != "debug-node" {
		t.Errorf("reservation dump %+v", r)
	}
	if dump.PodGroups == nil || dump.PDBs == nil || dump.Movements == nil {
		t.Error("a store section is missing")
	}

	if code, body = get("/debug/cache/nodes/debug-node"); code != 200 || !strings.Contains(string(body), ns+"/p") {
		t.Errorf("/debug/cache/nodes/debug-node: %d %s", code, body)
	}
	if code, _ = get("/debug/cache/nodes/nowhere"); code != 404 {
		t.Errorf("unknown node: %d, want 404", code)
	}
	if code, body = get("/debug/cache/compare"); code != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("/debug/cache/compare: %d %s, want an empty list", code, body)
	}
	if code, _ = get("/debug/pprof/"); code != 200 {
		t.Errorf("/debug/pprof/: %d", code)
	}
}

func TestMetrics_AreOnTheControllerRuntimeRegistry(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("metrics-node", "8", "16Gi")), ts.MakeReservation(ns, "r", "metrics-node", "1", "1Gi"))
	consistent(t, op)
	// A rejected event, an invariant check and a snapshot, so every metric has a sample.
	_ = op.Cache.AssumePod(ts.MakePod(ns, "no-node"))
	op.Cache.CheckInvariants()
	_ = op.Cache.UpdateSnapshot(op.Cache.NewSnapshot(store.SnapshotOptions{}))
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range families {
		have[f.GetName()] = true
	}
	for _, name := range []string{
		"multicache_events_total", "multicache_store_op_duration_seconds", "multicache_store_objects",
		"multicache_assumed_pods", "multicache_expired_pods_total", "multicache_reservations",
		"multicache_reaper_expired_total", "multicache_snapshot_duration_seconds", "multicache_invariant_violations_total",
	} {
		if !have[name] {
			t.Errorf("metric %s is not registered", name)
		}
	}
	if got := gauge(t, families, "multicache_reservations", "phase", "Reserved"); got < 1 {
		t.Errorf("multicache_reservations{phase=Reserved} = %v, want at least 1", got)
	}
	if got := eventCount(t, "Pod", "assume", "invalid_object"); got < 1 {
		t.Errorf("the rejected assume was not counted")
	}
}

// gauge reads one sample of a gathered metric family by one label.
func gauge(t *testing.T, families []*dto.MetricFamily, name, label, value string) float64 {
	t.Helper()
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
