package handler

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestConcurrency_ReadersSnapshotsAndWritersTogether runs writers (pod life cycles with
// assume, confirm, update, delete; reservations), readers, snapshot updaters and the
// housekeeping loop at once. Run with -race; afterwards every invariant must hold.
func TestConcurrency_ReadersSnapshotsAndWritersTogether(t *testing.T) {
	h, clk := newHandler(t)
	const nodes, writers, podsPerWriter = 8, 4, 60
	for i := range nodes {
		must(t, h.Add(ts.MakeNode(fmt.Sprintf("n%d", i), "64", "256Gi")))
	}
	must(t, h.Add(ts.MakePodGroup("ns", "gang", 3)))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, writers*podsPerWriter*4)

	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range podsPerWriter {
				node := fmt.Sprintf("n%d", (w+i)%nodes)
				name := fmt.Sprintf("w%d-p%d", w, i)
				p := ts.MakePod("ns", name, ts.OnNode(node), ts.Requests("100m", "128Mi"), ts.InGroup("gang"), ts.WithLabels("app", "web"))
				if i%5 == 0 {
					must(t, h.Add(ts.MakeReservation("ns", "r-"+name, node, "100m", "128Mi", "app", "web")))
				}
				for _, err := range []error{h.AssumePod(p), h.FinishBinding(p), h.Add(p), h.Update(p, p)} {
					if err != nil {
						errs <- err
					}
				}
				if i%3 == 0 {
					if err := h.Delete(p); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			snap := h.NewSnapshot(store.SnapshotOptions{})
			for ctx.Err() == nil {
				_ = h.UpdateSnapshot(snap)
				for _, info := range snap.Nodes().List() {
					_ = info.Requested.MilliCPU + int64(len(info.Pods))
				}
				_ = h.NodeInfos()
				_, _ = h.PodGroup(types.NamespacedName{Namespace: "ns", Name: "gang"})
				_ = h.ReservationsOnNode("n1")
				_ = h.WriteDump(ctx, io.Discard, DumpCompact)
			}
		}()
	}
	readers.Add(1)
	go func() {
		defer readers.Done()
		for ctx.Err() == nil {
			clk.Step(time.Second)
			h.ExpireAssumedPods()
			h.ReapReservations()
		}
	}()
	wg.Wait()
	cancel()
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error("writer:", err)
	}
	checkInvariants(t, h)
}
