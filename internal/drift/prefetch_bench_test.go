package drift

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkCompare_PageLatency compares 60,000 pods that agree, listed through the metadata
// stream in pages of 2,000 from an in-process API that takes pageLatency to answer each
// request (as the API server takes to gather a page from etcd before its first byte): the
// comparison's time when it waits for each page (its own work on a page adds to the wait)
// against asking for the next page ahead. Run:
// go test -run '^$' -bench BenchmarkCompare_PageLatency -count 6 ./internal/drift
func BenchmarkCompare_PageLatency(b *testing.B) {
	const pageLatency = 20 * time.Millisecond
	h := newCache(b)
	inf := newFakeInformers()
	for i := range 60000 {
		pod := ts.MakePod(fmt.Sprintf("ns-%02d", i%50), fmt.Sprintf("p-%06d", i), ts.OnNode("n"), ts.WithResourceVersion(fmt.Sprint(i)))
		if err := h.Add(pod); err != nil {
			b.Fatal(err)
		}
		inf.add(b, pod)
	}
	stream, _ := newMetadataStream(b, inf, 2000, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			time.Sleep(pageLatency)
			return rt.RoundTrip(req)
		})
	})
	pods := []Listing{Listings[0]}
	compare := func() {
		diffs, err := Compare(context.Background(), h, stream, nil, pods...)
		if err != nil || len(diffs) != 0 {
			b.Fatalf("differences %v, %v", diffs, err)
		}
	}
	compare() // encodes the pages
	for b.Loop() {
		compare()
	}
}
