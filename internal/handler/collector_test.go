package handler

import (
	"maps"
	"regexp"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"
)

// deviceGauges reads multicache_devices from a registry: "class/state" -> value.
func deviceGauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	must(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "multicache_devices" {
			continue
		}
		for _, m := range f.GetMetric() {
			var class, state string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "class":
					class = l.GetValue()
				case "state":
					state = l.GetValue()
				}
			}
			out[class+"/"+state] = m.GetGauge().GetValue()
		}
	}
	return out
}

func deviceClass(name, expr string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-class-" + name)},
		Spec:       resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}},
	}
}

// TestCollector_DeviceGaugesFollowEveryEvent: multicache_devices reads the totals the
// devices store keeps as events arrive: slices, claims (an assumed one at once), a class
// added and removed all show on the next scrape, with the all-devices series (class="")
// present before any DRA object exists.
func TestCollector_DeviceGaugesFollowEveryEvent(t *testing.T) {
	h, _ := newHandler(t)
	reg := prometheus.NewPedanticRegistry()
	must(t, reg.Register(NewCollector(h)))
	want := func(what string, w map[string]float64) {
		t.Helper()
		if got := deviceGauges(t, reg); !maps.Equal(got, w) {
			t.Errorf("%s: multicache_devices %v, want %v", what, got, w)
		}
	}
	want("no DRA object", map[string]float64{"/total": 0, "/allocated": 0, "/free": 0})

	must(t, h.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}}))
	must(t, h.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", UID: "uid-n2"}}))
	must(t, h.Add(deviceClass("gpus", `device.driver == "gpu.example.com"`)))
	must(t, h.Add(draSlice("s1", "n1", "gpu0", "gpu1", "gpu2", "gpu3")))
	must(t, h.Add(draSlice("s2", "n2", "gpu0", "gpu1")))
	must(t, h.Add(draClaim("c1", "n1", "gpu0", "gpu1")))
	want("6 devices, 2 allocated", map[string]float64{"/total": 6, "/allocated": 2, "/free": 4, "gpus/total": 6, "gpus/allocated": 2, "gpus/free": 4})

	must(t, h.AssumeClaim(atVersion(draClaim("c2", "n2", "gpu0"), "5")))
	want("one more assumed", map[string]float64{"/total": 6, "/allocated": 3, "/free": 3, "gpus/total": 6, "gpus/allocated": 3, "gpus/free": 3})

	must(t, h.ForgetClaim(atVersion(draClaim("c2", "n2", "gpu0"), "5")))
	must(t, h.Delete(draClaim("c1", "n1", "gpu0", "gpu1")))
	must(t, h.Delete(draSlice("s2", "n2", "gpu0", "gpu1")))
	want("c2 forgotten, c1 and n2's slice gone", map[string]float64{"/total": 4, "/allocated": 0, "/free": 4, "gpus/total": 4, "gpus/allocated": 0, "gpus/free": 4})

	must(t, h.Add(deviceClass("none", `false`)))
	must(t, h.Delete(deviceClass("gpus", `device.driver == "gpu.example.com"`)))
	want("gpus removed, none added", map[string]float64{"/total": 4, "/allocated": 0, "/free": 4, "none/total": 0, "none/allocated": 0, "none/free": 0})
	checkInvariants(t, h)
}

// TestCollector_SendsWithTheLockReleased: the gauges are read under the lock and sent after,
// so a scrape whose registry is slow to take them (here: not at all) keeps no event
// waiting. The first sample received, the write lock is free and an event applies.
func TestCollector_SendsWithTheLockReleased(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}}))
	ch := make(chan prometheus.Metric)
	go func() {
		defer close(ch)
		NewCollector(h).Collect(ch)
	}()
	<-ch // Collect now waits to send the second sample.
	if !h.mu.TryLock() {
		t.Fatal("the cache's lock is held while the collector waits for the registry")
	}
	h.mu.Unlock()
	must(t, h.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", UID: "uid-n2"}}))
	for range ch {
	}
}

// TestCollector_MetricNamesAreTheDescribedFamilies: MetricNames (what a filtered read of
// /metrics is answered from, metrics.Served) names every family Describe gives.
func TestCollector_MetricNamesAreTheDescribedFamilies(t *testing.T) {
	fqName := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	c := NewCollector(nil)
	descs := make(chan *prometheus.Desc, 8)
	c.Describe(descs)
	close(descs)
	var described []string
	for d := range descs {
		described = append(described, fqName.FindStringSubmatch(d.String())[1])
	}
	if names := c.MetricNames(); !slices.Equal(names, described) {
		t.Errorf("MetricNames %v, Describe %v", names, described)
	}
}
