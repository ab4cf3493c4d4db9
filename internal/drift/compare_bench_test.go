package drift

import (
	"context"
	"fmt"
	"testing"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkCompare_Informers compares, at 5,000 nodes and 150,000 pods that agree, the
// verify loop's comparison of the handler with the informers (every watched kind) when the
// versions of both are copied into maps (what it did before) and where they are; and the
// same with the objects listed as copies, the way /debug/cache/compare reads the API's
// pages (the copies' cost is in both of those figures). Run:
// go test -run '^$' -bench BenchmarkCompare_Informers -benchmem ./internal/drift
func BenchmarkCompare_Informers(b *testing.B) {
	h := newCache(b)
	inf := newFakeInformers()
	const nodes, pods = 5000, 150000
	for i := range nodes {
		node := ts.MakeNode(fmt.Sprintf("n-%05d", i), "64", "256Gi")
		node.ResourceVersion = "1"
		if err := h.Add(node); err != nil {
			b.Fatal(err)
		}
		inf.add(b, node)
	}
	for i := range pods {
		pod := ts.MakePod(fmt.Sprintf("ns-%02d", i%50), fmt.Sprintf("p-%06d", i), ts.OnNode(fmt.Sprintf("n-%05d", i%nodes)),
			ts.Requests("100m", "128Mi"), ts.WithResourceVersion(fmt.Sprint(i)))
		if err := h.Add(pod); err != nil {
			b.Fatal(err)
		}
		inf.add(b, pod)
	}
	src := InformerSource{Informers: inf}
	for _, c := range []struct {
		name  string
		cache Cache
		src   Source
	}{
		{"maps", mapsOnly{h}, src},
		{"where-they-are", h, src},
		// /debug/cache/compare's path: the API's pages (copies, as decoded), compared
		// through maps (before) and as they arrive (after).
		{"pages-maps", mapsOnly{h}, pagedSource{src}},
		{"pages-as-they-arrive", h, pagedSource{src}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				diffs, err := Compare(context.Background(), c.cache, c.src, nil)
				if err != nil || len(diffs) != 0 {
					b.Fatalf("differences %v, %v", diffs, err)
				}
			}
		})
	}
}
