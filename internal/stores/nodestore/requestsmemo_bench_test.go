package nodestore

import (
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkRequestsMemo_Fill150000Pods charges the 150,000 pods of ts.LargeCluster (resource
// lists shared as podTransform shares them: TestPodTransform_InformerHandsOverSharedLists) to
// a NodeStore that holds their nodes: "memo" is AddPod as it is; "helper" is AddPod with the
// requests computed by component-helpers' PodRequests every time (what the store does
// without the memo; a memo keyed by UID and resourceVersion would never hit on a fill, each
// pod being new). Both run in one process, one after the other; run the binary several times
// so that benchstat compares them under the same load:
//
//	go test -c -o /tmp/nodestore.test ./internal/stores/nodestore && cd internal/stores/nodestore &&
//	for i in 1 2 3 4 5 6; do /tmp/nodestore.test -test.run '^$' -test.bench BenchmarkRequestsMemo_Fill150000Pods \
//	  -test.benchmem -test.benchtime 1x; done | benchstat -col /requests -
func BenchmarkRequestsMemo_Fill150000Pods(b *testing.B) {
	nodes, pods := ts.LargeCluster()
	for _, variant := range []string{"memo", "helper"} {
		b.Run("requests="+variant, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				cfg, err := stores.NewCacheHandler(stores.Config{})
				if err != nil {
					b.Fatal(err)
				}
				s := New(cfg)
				for _, n := range nodes {
					s.AddNode(n)
				}
				b.StartTimer()
				if variant == "memo" {
					for _, p := range pods {
						s.AddPod(p)
					}
				} else {
					for _, p := range pods { // AddPod's body, the requests from the helper
						info := s.getOrCreate(p.Spec.NodeName)
						req := s.acct.PodRequests(p)
						s.chargePod(info, p, req)
						s.charges[p] = req
						s.changed(info)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pods)), "ns/pod")
		})
	}
}
