package operator

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestScale_CatchUpAndVerifyCost measures, on a populated cluster, how long a cold start
// takes to catch up and what one verify run costs. It reports figures and asserts only
// correctness (caught up with every pod, no drift on a quiet cluster). It runs when
// MULTICACHE_SCALE_NODES and MULTICACHE_SCALE_PODS are set (`make scale-check`).
func TestScale_CatchUpAndVerifyCost(t *testing.T) {
	nodes, _ := strconv.Atoi(os.Getenv("MULTICACHE_SCALE_NODES"))
	pods, _ := strconv.Atoi(os.Getenv("MULTICACHE_SCALE_PODS"))
	if nodes <= 0 || pods <= 0 {
		t.Skip("set MULTICACHE_SCALE_NODES and MULTICACHE_SCALE_PODS (make scale-check)")
	}
	ns := newNamespace(t)
	populate := time.Now()
	parallel(t, nodes, func(i int) error {
		return env.Client.Create(ctx(), withoutUID(ts.MakeNode(fmt.Sprintf("scale-%05d", i), "64", "256Gi", "multicache.dev/scale-test", "true")))
	})
	parallel(t, pods, func(i int) error {
		p := ts.MakePod(ns, fmt.Sprintf("scale-%06d", i), ts.OnNode(fmt.Sprintf("scale-%05d", i%nodes)), ts.Requests("100m", "128Mi"),
			ts.WithLabels("app", fmt.Sprintf("app-%d", i%100)))
		p.UID = ""
		return env.Client.Create(ctx(), p)
	})
	t.Logf("populated %d nodes and %d pods in %v", nodes, pods, time.Since(populate).Round(time.Millisecond))
	t.Cleanup(func() {
		_ = env.Client.DeleteAllOf(ctx(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
		_ = env.Client.DeleteAllOf(ctx(), &corev1.Node{}, client.MatchingLabels{"multicache.dev/scale-test": "true"})
	})

	for round := range 3 {
		start := time.Now()
		op := startOperator(t, func(o *Options) { o.VerifyPeriod = 0 })
		ready := time.Since(start)
		took, objects := op.CatchUp.Result()
		info, _ := op.Cache.NodeInfo("scale-00000")
		t.Logf("round %d: ready after %v (caught up in %v with %d objects); scale-00000 holds %d pods",
			round, ready.Round(time.Millisecond), took.Round(time.Millisecond), objects, len(info.Pods))
		if objects < nodes+pods {
			t.Errorf("caught up with %d objects, want at least %d", objects, nodes+pods)
		}
		var total time.Duration
		const runs = 5
		for range runs {
			res, err := op.Verify.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Drift) > 0 || len(res.Violations) > 0 {
				t.Errorf("a quiet cluster drifted: %d differences, %d violations", len(res.Drift), len(res.Violations))
			}
			total += res.Took
		}
		t.Logf("round %d: one verify run (invariants + comparison with the informers) takes %v on average",
			round, (total / runs).Round(time.Microsecond))
		op.stop(t)
	}
}

// parallel runs do(0..n-1) with a few workers at once.
func parallel(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	const workers = 16
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
