package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

func TestMatchLags(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sample := func(ms int, adds float64) eventSample {
		return eventSample{at: at(ms), applied: [numOps]float64{opCreate: adds}}
	}
	// Base 10 adds; writes answered at 0, 5, 20 ms; the counter reaches 11 at 10 ms, 13 at 30 ms.
	samples := []eventSample{sample(0, 10), sample(10, 11), sample(20, 11), sample(30, 13)}
	lags, missing := matchLags([]time.Time{at(0), at(5), at(20)}, samples, opCreate, 10)
	want := []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 10 * time.Millisecond}
	if missing != 0 || len(lags) != len(want) {
		t.Fatalf("lags %v missing %d, want %v", lags, missing, want)
	}
	for i := range want {
		if lags[i] != want[i] {
			t.Errorf("lag %d = %v, want %v", i, lags[i], want[i])
		}
	}
	// A fourth write the counter never shows.
	if _, missing := matchLags([]time.Time{at(0), at(5), at(20), at(25)}, samples, opCreate, 10); missing != 1 {
		t.Errorf("missing = %d, want 1", missing)
	}
	// An event applied before the write's answer arrived counts as zero lag.
	if lags, _ := matchLags([]time.Time{at(15)}, samples, opCreate, 10); lags[0] != 0 {
		t.Errorf("early event: lag %v, want 0", lags[0])
	}
}

func TestQuantiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	q := quantiles(d)
	if q.N != 100 || q.P50 != 50*time.Millisecond || q.P99 != 99*time.Millisecond || q.Max != 100*time.Millisecond {
		t.Errorf("quantiles = %+v", q)
	}
	if q := quantiles(nil); q.N != 0 {
		t.Errorf("quantiles(nil) = %+v", q)
	}
}

func TestProc(t *testing.T) {
	mem, err := ReadMem(os.Getpid())
	if err != nil || mem.RSS <= 0 || mem.HWM < mem.RSS {
		t.Errorf("ReadMem = %+v, %v", mem, err)
	}
	if _, err := ReadCPU(os.Getpid()); err != nil {
		t.Errorf("ReadCPU: %v", err)
	}
}

func TestSizes(t *testing.T) {
	s, err := ParseSize("medium")
	if err != nil || s.Nodes != 1000 || s.Pods != 30000 {
		t.Fatalf("medium = %+v, %v", s, err)
	}
	if s.ReplicaSets() != 3000 || s.Namespaces() != 10 || s.PodGroups() != 300 || s.PDBs() != 600 || s.Reservations() != 100 {
		t.Errorf("medium derived: %s", s)
	}
	if s, err := ParseSize("10/25"); err != nil || s.Nodes != 10 || s.Pods != 25 || s.ReplicaSets() != 3 || podsOf(s, 2) != 5 {
		t.Errorf("10/25 = %+v, %v", s, err)
	}
	if _, err := ParseSize("huge"); err == nil {
		t.Error("ParseSize(huge) succeeded")
	}
}

// TestShardWant: each split's shards add up to the cluster, and shard s holds the nodes
// numbered s mod k and the pods bound to them.
func TestShardWant(t *testing.T) {
	for _, size := range []Size{Sizes["small"], Sizes["medium"], {Name: "odd", Nodes: 6, Pods: 7}, {Name: "4,500", Nodes: 4500, Pods: 135000}} {
		for _, k := range ShardSplits {
			var nodes, pods int
			for s := range k {
				w := ShardWant(size, k, s)
				nodes, pods = nodes+w.Nodes, pods+w.Pods
			}
			if nodes != size.Nodes || pods != size.Pods {
				t.Errorf("%s in %d: shards hold %d nodes / %d pods, want %d / %d", size.Name, k, nodes, pods, size.Nodes, size.Pods)
			}
		}
	}
	if w := ShardWant(Sizes["medium"], 4, 1); w.Nodes != 250 || w.Pods != 7500 {
		t.Errorf("medium shard 1 of 4: %+v, want 250 nodes / 7,500 pods", w)
	}
	// 4,500 nodes in 8: shards 0-3 hold 563 nodes, 4-7 hold 562, each with 30 pods a node.
	if w := ShardWant(Size{Nodes: 4500, Pods: 135000}, 8, 3); w.Nodes != 563 || w.Pods != 563*30 {
		t.Errorf("4,500 nodes, shard 3 of 8: %+v, want 563 nodes / 16,890 pods", w)
	}
	if w := ShardWant(Size{Nodes: 4500, Pods: 135000}, 8, 4); w.Nodes != 562 || w.Pods != 562*30 {
		t.Errorf("4,500 nodes, shard 4 of 8: %+v, want 562 nodes / 16,860 pods", w)
	}
	if ValidShardSplit(8) != nil || ValidShardSplit(3) == nil {
		t.Error("ValidShardSplit: 8 refused or 3 accepted")
	}
}

func TestNewAPICost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before := APISnapshot{At: t0, APIServerCPU: time.Second, EtcdCPU: 100 * time.Millisecond, Metrics: harness.ParseMetrics([]byte(`
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 4
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 10
apiserver_watch_events_total{group="",resource="pods",version="v1"} 100
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 50000
apiserver_longrunning_requests{component="apiserver",group="",resource="secrets",scope="cluster",subresource="",verb="WATCH",version="v1"} 1
`), apiServerSeries...)}
	after := APISnapshot{At: t0.Add(3 * time.Second), APIServerCPU: 3500 * time.Millisecond, EtcdCPU: 300 * time.Millisecond, Metrics: harness.ParseMetrics([]byte(`
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 5
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 12
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 0.25
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1",le="1"} 5
apiserver_watch_events_total{group="",resource="pods",version="v1"} 3100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="cluster",subresource="",verb="WATCH",version="v1"} 1
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="secrets",scope="cluster",subresource="",verb="WATCH",version="v1"} 386
apiserver_watch_events_sizes_sum{group="",resource="pods",version="v1"} 1550000
apiserver_watch_events_total{group="resource.k8s.io",resource="resourceslices",version="v1"} 10
apiserver_watch_list_duration_seconds_sum{component="apiserver",group="",resource="pods",scope="cluster",version="v1"} 1.5
apiserver_watch_list_duration_seconds_count{component="apiserver",group="",resource="pods",scope="cluster",version="v1"} 1
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 1
apiserver_longrunning_requests{component="apiserver",group="",resource="nodes",scope="cluster",subresource="",verb="WATCH",version="v1"} 0
apiserver_longrunning_requests{component="apiserver",group="",resource="secrets",scope="cluster",subresource="",verb="WATCH",version="v1"} 1
`), apiServerSeries...)}
	c := NewAPICost(before, after)
	if c.Window != 3*time.Second || c.APIServerCPU != 2500*time.Millisecond || c.EtcdCPU != 200*time.Millisecond {
		t.Errorf("window %v, CPU %v / %v; want 3s, 2.5s / 200ms", c.Window, c.APIServerCPU, c.EtcdCPU)
	}
	if r := c.Row("LIST", "pods"); r.Requests != 1 || r.Seconds != 0.25 {
		t.Errorf("LIST pods: %+v, want 1 request in 0.25 s (the bucket series ignored)", r)
	}
	if r := c.Row("GET", "(non-resource)"); r.Requests != 2 {
		t.Errorf("GET /readyz: %+v, want 2 requests", r)
	}
	w := c.Row("WATCH", "pods")
	if w.WatchEvents != 3000 || w.BytesPerEvent() != 500 || w.StreamedLists != 1 || w.StreamedListSeconds != 1.5 || w.OpenWatches != 1 {
		t.Errorf("WATCH pods: %+v, want 3000 events of 500 B, one streamed list of 1.5 s, one open watch", w)
	}
	if r := c.Row("WATCH", "resourceslices.resource.k8s.io"); r.WatchEvents != 10 {
		t.Errorf("WATCH resourceslices: %+v, want 10 events (the group written after the resource)", r)
	}
	for _, res := range []string{"nodes", "secrets"} {
		if r := c.Row("WATCH", res); r != (RequestMix{Verb: "WATCH", Resource: res}) {
			t.Errorf("WATCH %s: %+v, want no row (no event, no more watches open than before)", res, r)
		}
	}
	if requests, _, events, _, watches := c.Totals(); requests != 3 || events != 3010 || watches != 1 {
		t.Errorf("totals: %d requests, %d events, %d watches; want 3, 3010, 1", requests, events, watches)
	}
	if got := c.NetAPIServerCPU(); got != 0 {
		t.Errorf("net of idle without an idle rate: %v, want 0", got)
	}
	c.IdleCores = 0.5
	if got := c.NetAPIServerCPU(); got != time.Second {
		t.Errorf("net of idle at 0.5 cores over 3 s from 2.5 s: %v, want 1s", got)
	}
	if c.Mix[0] != w {
		t.Errorf("first row %+v, want the pods' watch (most API server time)", c.Mix[0])
	}
}

func TestParseSeries(t *testing.T) {
	name, labels := parseSeries(`m{a="x",b="q\"uo\\te",c=""}`)
	if name != "m" || labels["a"] != "x" || labels["b"] != `q"uo\te` || labels["c"] != "" || len(labels) != 3 {
		t.Errorf("got %q %q", name, labels)
	}
	if name, labels := parseSeries("plain"); name != "plain" || labels != nil {
		t.Errorf("got %q %q", name, labels)
	}
}

func TestSizeWithDevices(t *testing.T) {
	s, err := Sizes["large"].WithDevices(DefaultDevicesPerNode, DefaultClaimsPerNode)
	if err != nil {
		t.Fatal(err)
	}
	if s.Devices() != 40000 || s.Claims() != 20000 || s.ResourceSlices() != 5000 || s.DeviceClasses() != 1 {
		t.Errorf("large with devices: %s; want 40,000 devices in 5,000 slices and 20,000 claims", s)
	}
	if _, err := Sizes["small"].WithDevices(2, 3); err == nil {
		t.Error("3 claims per node on 2 devices: no error")
	}
	if d := Sizes["small"]; d.ResourceSlices()+d.Claims()+d.DeviceClasses() != 0 {
		t.Errorf("small without devices: %s", d)
	}
	// Every claim takes a device its node publishes, none twice.
	s, _ = Sizes["small"].WithDevices(DefaultDevicesPerNode, DefaultClaimsPerNode)
	seen := map[string]bool{}
	for k := range s.Claims() {
		r := MakeResourceClaim(k, s).Status.Allocation.Devices.Results[0]
		id := r.Pool + "/" + r.Device
		if seen[id] {
			t.Fatalf("claim %d: device %s taken twice", k, id)
		}
		seen[id] = true
		var published bool
		for _, d := range MakeResourceSlice(k%s.Nodes, s.DevicesPerNode).Spec.Devices {
			published = published || (d.Name == r.Device && MakeResourceSlice(k%s.Nodes, s.DevicesPerNode).Spec.Pool.Name == r.Pool)
		}
		if !published {
			t.Fatalf("claim %d: device %s not published by its node's slice", k, id)
		}
	}
}

func TestChildProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	children, err := childProcesses(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := children["sleep"]; got != cmd.Process.Pid {
		t.Errorf("children %v: sleep is %d, want %d", children, got, cmd.Process.Pid)
	}
	if others, err := childProcesses(cmd.Process.Pid); err != nil || len(others) != 0 {
		t.Errorf("sleep's children: %v, %v; want none", others, err)
	}
}

// TestReadEvents reads the pod event counters of multicache and of the bare informer
// (cmd/informer writes them in multicache's shape) into the same sample, and leaves out the
// other kinds and families.
func TestReadEvents(t *testing.T) {
	for _, c := range []struct{ family, body string }{
		{multicacheEvents, `multicache_events_total{kind="Pod",op="add",result="ok"} 3
multicache_events_total{kind="Pod",op="update",result="ok"} 5
multicache_events_total{kind="Pod",op="delete",result="ok"} 7
multicache_events_total{kind="Pod",op="update",result="rejected"} 1
multicache_events_total{kind="Node",op="update",result="ok"} 100
`},
		{informerEvents, `informer_objects{kind="pods"} 30000
informer_synced 1
informer_events_total{kind="Pod",op="add",result="ok"} 3
informer_events_total{kind="Pod",op="update",result="ok"} 5
informer_events_total{kind="Pod",op="delete",result="ok"} 7
multicache_events_total{kind="Pod",op="update",result="rejected"} 1
`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, c.body) }))
		s, err := readEvents(context.Background(), srv.URL, c.family)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		wantRejected := 1.0
		if c.family == informerEvents {
			wantRejected = 0
		}
		if s.applied != [numOps]float64{3, 5, 7} || s.rejected != wantRejected {
			t.Errorf("%s: applied %v rejected %v, want [3 5 7] and %v", c.family, s.applied, s.rejected, wantRejected)
		}
	}
}

// TestChurnPod_HasThePopulationsShape: with realistic pods the churn creates realistic
// ones (the projected service-account volume, a name of its own), else synthetic ones.
func TestChurnPod_HasThePopulationsShape(t *testing.T) {
	for _, shape := range []string{PodsRealistic, PodsSynthetic} {
		size, err := Sizes["small"].WithPodShape(shape)
		if err != nil {
			t.Fatal(err)
		}
		p := (&churner{size: size}).churnPod(3)
		if p.Name != "churn-0000003" || p.GenerateName != "" {
			t.Errorf("%s: name %q, generateName %q, want churn-0000003 and none", shape, p.Name, p.GenerateName)
		}
		if got, want := len(p.Spec.Volumes) == 1, shape == PodsRealistic; got != want {
			t.Errorf("%s: volumes %v", shape, p.Spec.Volumes)
		}
	}
}

// TestAlternate_NeitherBuildAlwaysFollowsTheOther: over the rotated rounds of a run,
// multicache starts before its baseline in even rounds and after it in odd ones.
func TestAlternate_NeitherBuildAlwaysFollowsTheOther(t *testing.T) {
	subjects := []Subject{{Name: "informer"}, {Name: "multicache"}, {Name: BaselineName}}
	for round := range 4 {
		order := make([]Subject, len(subjects))
		for i := range order {
			order[i] = subjects[(i+round)%len(subjects)]
		}
		alternate(order, round, "multicache", BaselineName)
		at := map[string]int{}
		for i, s := range order {
			at[s.Name] = i
		}
		if first := at["multicache"] < at[BaselineName]; first != (round%2 == 0) {
			t.Errorf("round %d: order %v: multicache first = %v", round, at, first)
		}
	}
}
