package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/seed0f91f25e/multicache/examples/out-of-tree/zonestore"
	"github.com/seed0f91f25e/multicache/pkg/envtest"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

// env is the real kube-apiserver and etcd the tests run against.
var env *envtest.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func TestZones_TheStoreAndItsSiblingRunLikeBuiltIns(t *testing.T) {
	op := start(t, "--stores=nodes,pods,zones")
	ns := namespace(t)
	create(t, node("zone-a-1", "a"), node("zone-b-1", "b"))
	rs := replicaSet(ns, "web")
	create(t, rs)
	create(t, pod(ns, "web-1", "zone-a-1", rs), pod(ns, "web-2", "zone-a-1", rs), pod(ns, "solo", "zone-b-1", nil))

	snap := op.Reader().NewSnapshot(multicache.SnapshotOptions{})
	zones := func() *zonestore.Snapshot {
		if err := op.Reader().UpdateSnapshot(snap); err != nil {
			t.Fatal(err)
		}
		return snap.Part(zonestore.Name).(*zonestore.Snapshot)
	}
	eventually(t, "the zones store counts the pods of each zone", func() (bool, string) {
		got := zones()
		return reflect.DeepEqual(got.Zones(), map[string]int{"a": 2, "b": 1}) && len(got.SingleZone()) == 1, fmt.Sprint(got.Zones(), got.SingleZone())
	})
	if got := zones().SingleZone()[0]; got.Name != "web" || got.Namespace != ns {
		t.Errorf("single-zone workload %+v, want %s/web", got, ns)
	}
	if !slices.Contains(op.WatchedKinds(), "Owner") {
		t.Errorf("watched %v: the zones store handles owners", op.WatchedKinds())
	}

	// The debug dump serves it under extensions, like any store.
	var dump struct {
		Stores     []string `json:"stores"`
		Extensions map[string]map[string]struct {
			Pods      int            `json:"pods"`
			Workloads map[string]int `json:"workloads"`
		} `json:"extensions"`
	}
	getJSON(t, op, "/debug/cache", &dump)
	if a := dump.Extensions["zones"]["a"]; a.Pods != 2 || a.Workloads["ReplicaSet/"+ns+"/web"] != 2 {
		t.Errorf("dump of zone a: %+v (stores %v)", a, dump.Stores)
	}
	// The verify loop checks the store's invariants with the others and finds no drift.
	if err := op.Verify(ctx()); err != nil {
		t.Errorf("verify: %v", err)
	}
	// The cache's gauge counts it; the sibling read it in process and exported it.
	eventually(t, "the gauges", func() (bool, string) {
		objects := gauge(t, "multicache_store_objects", "store", "zones")
		zoneA := gauge(t, "zones_pods", "zone", "a")
		single := gauge(t, "zones_single_zone_workloads", "", "")
		return objects == 3 && zoneA == 2 && single == 1, fmt.Sprintf("store_objects %v, zones_pods{a} %v, single-zone %v", objects, zoneA, single)
	})

	// A node moving zone moves its pods; a deleted pod leaves its zone (no kubelet: deleted
	// at once).
	n := &corev1.Node{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Name: "zone-a-1"}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels[corev1.LabelTopologyZone] = "b"
	if err := env.Client.Update(ctx(), n); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx(), pod(ns, "solo", "", nil), client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pods follow their node to zone b", func() (bool, string) {
		got := zones().Zones()
		return reflect.DeepEqual(got, map[string]int{"b": 2}), fmt.Sprint(got)
	})
	if err := op.Verify(ctx()); err != nil {
		t.Errorf("verify: %v", err)
	}
}

func TestZones_DisabledThroughStoresIsNotBuiltNorWatched(t *testing.T) {
	before := reconciles(t, "ReplicaSet-owner-feed")
	op := start(t, "--stores=nodes,pods")
	ns := namespace(t)
	create(t, node("zone-c-1", "c"), replicaSet(ns, "api"))
	if got := op.StoreNames(); slices.Contains(got, zonestore.Name) {
		t.Errorf("stores %v include the disabled zones store", got)
	}
	if slices.Contains(op.WatchedKinds(), "Owner") {
		t.Errorf("watched %v: no enabled store handles owners", op.WatchedKinds())
	}
	snap := op.Reader().NewSnapshot(multicache.SnapshotOptions{})
	_ = op.Reader().UpdateSnapshot(snap)
	if part := snap.Part(zonestore.Name); part != nil {
		t.Errorf("a snapshot has a part of the disabled store: %#v", part)
	}
	var dump map[string]any
	getJSON(t, op, "/debug/cache", &dump)
	if _, ok := dump["extensions"]; ok {
		t.Errorf("the dump has extensions: %v", dump["extensions"])
	}
	time.Sleep(300 * time.Millisecond) // room for a wrong reconcile
	if got := reconciles(t, "ReplicaSet-owner-feed") - before; got != 0 {
		t.Errorf("the ReplicaSet feed reconciled %v times: owners are watched", got)
	}
}

func TestCommand_UnknownStoreNamesTheKnownOnes(t *testing.T) {
	_, err := newCommand().Options([]string{"--stores=nodes,zone"})
	if err == nil || !strings.Contains(err.Error(), `unknown store "zone"`) || !strings.Contains(err.Error(), "zones") {
		t.Errorf("error %v, want it to name the unknown store and list zones among the known ones", err)
	}
	opts, err := newCommand().Options(nil)
	if err != nil || !slices.Contains(opts.Stores(), zonestore.Name) {
		t.Errorf("default stores %v (%v): a registered store is enabled by default", opts.Stores(), err)
	}
}

// start builds the operator exactly as the binary does (newCommand and its flags), with
// test-friendly listeners, runs it and waits until it caught up.
func start(t *testing.T, args ...string) *multicache.Operator {
	t.Helper()
	args = append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--debug-bind-address=127.0.0.1:0", "--low-free-threshold=0"}, args...)
	opts, err := newCommand().Options(args)
	if err != nil {
		t.Fatal(err)
	}
	opts.SetSkipControllerNameValidation(true) // several operators in one process
	op, err := multicache.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with %v", err)
		}
	})
	eventually(t, "the operator caught up", func() (bool, string) { return op.Ready(), "not ready" })
	return op
}

func getJSON(t *testing.T, op *multicache.Operator, path string, into any) {
	t.Helper()
	rec := httptest.NewRecorder()
	// Addressed as a local client addresses it: the debug server answers only loopback hosts.
	op.DebugHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// gauge reads one gauge from controller-runtime's registry (-1 when absent); label "" for
// a gauge without labels.
func gauge(t *testing.T, name, label, value string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" {
				return m.GetGauge().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// reconciles reads controller-runtime's reconcile counter of one controller.
func reconciles(t *testing.T, controller string) float64 {
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
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s: %s", what, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ctx() context.Context { return context.Background() }

var namespaces int

func namespace(t *testing.T) string {
	t.Helper()
	namespaces++
	name := fmt.Sprintf("zones-%d", namespaces)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func node(name, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
}

func replicaSet(ns, name string) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// pod is a pod bound to nodeName, controlled by owner when set (created after it).
func pod(ns, name, nodeName string, owner *appsv1.ReplicaSet) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: nodeName,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner.Name,
			UID: owner.UID, Controller: ptr.To(true)}}
	}
	return p
}
