package devicestore_test

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// BenchmarkDevices_LargeCluster loads the devices of `make bench-e2e SIZE=large`'s DRA
// part into the store: 5,000 nodes with one node-local pool of 8 devices each, two
// DeviceClasses with CEL selectors, 20,000 allocated claims of one device each; then takes
// a full snapshot. ns/op is the whole load; the custom metrics give the cost per device and
// per claim (time, and heap retained by the store, its objects and one snapshot).
func BenchmarkDevices_LargeCluster(b *testing.B) {
	const nodes, perNode, claims = 5000, 8, 20000
	nodeObjs := make([]*nodeArg, nodes)
	for i := range nodes {
		nodeObjs[i] = &nodeArg{name: fmt.Sprintf("node-%04d", i)}
	}
	var retained uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		config, err := stores.NewCacheHandler(stores.Config{})
		if err != nil {
			b.Fatal(err)
		}
		s := newStoreFor(config)
		s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
		s.AddDeviceClass(makeClass("big", `device.attributes["gpu.example.com"].model == "big"`))
		for _, n := range nodeObjs {
			s.AddNode(node(n.name))
			s.AddResourceSlice(makeSlice(n.name, gpu, n.name, 1, 1, devs("gpu", perNode), onNode(n.name), withAttr("model", "big")))
		}
		for i := range claims {
			n := nodeObjs[i%nodes].name
			s.AddResourceClaim(makeClaim("ns", fmt.Sprintf("claim-%d", i), result{gpu, n, fmt.Sprintf("gpu%d", i/nodes), "", false}))
		}
		snap := s.NewSnapshot(store.SnapshotOptions{})
		s.UpdateSnapshot(snap, 0)
		if v, _ := s.Node("node-0000"); v.Allocated != claims/nodes || ptr.Deref(&v.Total, 0) != perNode {
			b.Fatalf("node-0000: %+v", v)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
		runtime.KeepAlive(snap)
	}
	b.ReportMetric(float64(retained)/float64(nodes*perNode+claims), "retained-B/object")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes*perNode+claims), "ns/object")
}

type nodeArg struct{ name string }
