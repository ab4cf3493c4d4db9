package handler

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// BenchmarkCheckInvariants_LockHeld measures, at 5,000 nodes and 150,000 pods, what the
// verify loop's invariant check costs the events applied meanwhile: the longest an event
// waited for the lock while checks ran back to back (event-wait-max-us), for the check in
// parts that CheckInvariants runs and for the recheck it falls back to (whole: the nodes
// under one hold, the pods under one hold); and how long a whole check takes. Run:
// go test -run '^$' -bench BenchmarkCheckInvariants_LockHeld -benchtime 5x ./internal/handler
func BenchmarkCheckInvariants_LockHeld(b *testing.B) {
	h, _ := newQuietHandler(b)
	const nodes, pods = 5000, 150000
	for i := range nodes {
		must(b, h.Add(ts.MakeNode(fmt.Sprintf("n-%05d", i), "64", "256Gi")))
	}
	for i := range pods {
		must(b, h.Add(ts.MakePod("ns", fmt.Sprintf("p-%06d", i), ts.OnNode(fmt.Sprintf("n-%05d", i%nodes)), ts.Requests("100m", "128Mi"))))
	}
	for _, bc := range []struct {
		name  string
		check func() []error
	}{
		{"in-parts", h.CheckInvariants},
		{"whole", h.checkWhole},
	} {
		b.Run(bc.name, func(b *testing.B) {
			waits := eventWaitsDuring(b, h, func() {
				for b.Loop() {
					if errs := bc.check(); len(errs) > 0 {
						b.Fatal(errs)
					}
				}
			})
			b.ReportMetric(float64(slices.Max(waits).Microseconds()), "event-wait-max-us")
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "event-wait-p99-us")
		})
	}
}

// eventWaitsDuring applies pod label updates back to back, 1 ms apart, while run runs, and
// returns how long each took (the wait for the lock, mostly).
func eventWaitsDuring(b *testing.B, h *Handler, run func()) []time.Duration {
	stop := make(chan struct{})
	var waits []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		old := ts.MakePod("ns", "p-000000", ts.OnNode("n-00000"), ts.Requests("100m", "128Mi"))
		h.mu.RLock()
		if e, ok := h.pods.Entry(store.PodKey(old)); ok {
			old = e.Pod
		}
		h.mu.RUnlock()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			next := old.DeepCopy()
			next.Labels = map[string]string{"i": fmt.Sprint(i)}
			next.ResourceVersion = fmt.Sprint(i + 1)
			start := time.Now()
			if err := h.Update(old, next); err != nil {
				b.Error(err)
				return
			}
			waits = append(waits, time.Since(start))
			old = next
		}
	})
	run()
	close(stop)
	wg.Wait()
	if len(waits) == 0 {
		waits = append(waits, 0)
	}
	return waits
}

// BenchmarkCheckInvariants_StoreHolds measures, on bench-e2e's large population (fillWorld:
// 5,000 nodes, 150,000 pods, 15,000 ReplicaSets, 3,000 PDBs, 1,500 pod groups, 500
// reservations), the hold of the handler's read lock that checkInParts takes for each store
// other than the NodeStore and the PodStore (locked: the time an event may wait for it), and
// the whole of that store's check (whole: the hold and what a DeferredChecker leaves for
// after it). Run:
// go test -run '^$' -bench BenchmarkCheckInvariants_StoreHolds -benchtime 20x -benchmem ./internal/handler
func BenchmarkCheckInvariants_StoreHolds(b *testing.B) {
	w := newFillWorld()
	h, _ := newQuietHandler(b)
	w.fillObjects(b, h)
	w.fillPods(b, h)
	for _, s := range h.stores {
		if s == store.Store(h.nodes) || s == store.Store(h.pods) {
			continue
		}
		b.Run(string(s.Name())+"/locked", func(b *testing.B) {
			for b.Loop() {
				h.mu.RLock()
				checkStoreLocked(s)
				h.mu.RUnlock()
			}
		})
		b.Run(string(s.Name())+"/whole", func(b *testing.B) {
			for b.Loop() {
				h.mu.RLock()
				finish := checkStoreLocked(s)
				h.mu.RUnlock()
				if errs := finish(); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
