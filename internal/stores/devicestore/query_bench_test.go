package devicestore_test

import (
	"fmt"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// BenchmarkClusterCounts is one scrape of multicache_devices at the size of `make bench-e2e
// SIZE=large`'s DRA part (5,000 nodes x 8 node-local devices, 20,000 allocated, two
// classes, plus one pool of 8 devices shared by every node): the time the collector holds
// the cache's read lock for it.
func BenchmarkClusterCounts(b *testing.B) {
	const nodes, perNode, claims = 5000, 8, 20000
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	s := newStoreFor(config)
	s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
	s.AddDeviceClass(makeClass("big", `device.attributes["gpu.example.com"].model == "big"`))
	for i := range nodes {
		n := fmt.Sprintf("node-%04d", i)
		s.AddNode(node(n))
		s.AddResourceSlice(makeSlice(n, gpu, n, 1, 1, devs("gpu", perNode), onNode(n), withAttr("model", "big")))
	}
	s.AddResourceSlice(makeSlice("fabric", "net.example.com", "fabric", 1, 1, devs("nic", perNode), allNodes()))
	for i := range claims {
		n := fmt.Sprintf("node-%04d", i%nodes)
		s.AddResourceClaim(makeClaim("ns", fmt.Sprintf("claim-%d", i), result{gpu, n, fmt.Sprintf("gpu%d", i/nodes), "", false}))
	}
	for b.Loop() {
		all, _ := s.ClusterCounts()
		if all.Total != nodes*perNode+perNode || all.Allocated != claims {
			b.Fatalf("%+v", all)
		}
	}
}
