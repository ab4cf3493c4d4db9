package drift

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// countingInformers records how many of its informers are being fetched at once; each
// fetch takes a few milliseconds, so that kinds compared side by side overlap.
type countingInformers struct {
	*fakeInformers
	inFlight, most atomic.Int32
}

func (c *countingInformers) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		most := c.most.Load()
		if n <= most || c.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	return c.fakeInformers.GetInformer(ctx, obj, opts...)
}

// TestCompare_ComparesTheInformersKindsOneAtATime: the verify loop's source is held in
// memory, with nothing to wait for, so its kinds are compared one at a time (side by side
// they took every CPU the events need); the comparison still finds what differs.
func TestCompare_ComparesTheInformersKindsOneAtATime(t *testing.T) {
	h := newCache(t)
	inf := &countingInformers{fakeInformers: newFakeInformers()}
	node := ts.MakeNode("n-0", "8", "32Gi")
	inf.add(t, node, ts.MakePod("ns", "p", ts.OnNode("n-0"), ts.Requests("1", "1Gi")))
	if err := h.Add(node); err != nil {
		t.Fatal(err)
	}
	diffs, err := Compare(context.Background(), h, InformerSource{Informers: inf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Key != "ns/p" || diffs[0].Problem != MissingFromCache {
		t.Errorf("differences %+v, want ns/p missing from the cache", diffs)
	}
	if most := inf.most.Load(); most != 1 {
		t.Errorf("%d kinds compared at once, want 1", most)
	}
}
