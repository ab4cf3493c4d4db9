package controllers

import (
	"runtime"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkFeed_RelistOf150000Pods: on a cache of ts.LargeCluster (5,000 nodes, 150,000
// pods, every built-in store), the informer relists (every pod again, same version, new
// object) and the pod feed hands the cache what it passes, its queue drained. Per op: the
// time of the delivery and the reconciles, and heap-MB, the live heap after it (the
// informer's objects, the cache, and whatever old objects the cache still holds). Variants,
// in one process, one after the other:
//   - as-is: podChanged passes a new object of the same version (pointer identity) and the
//     reconcile reads the informer's store (GetStore): the cache ends up holding the
//     informer's objects;
//   - version-only: podChanged compares versions only, so a relist passes nothing and the
//     cache keeps the objects of before;
//   - reader: the reconcile reads a copy of the informer's object, as through the manager's
//     cache reader: the cache ends up holding copies.
//
// Run the binary several times so that benchstat compares them under the same load:
//
//	go test -c -o /tmp/controllers.test ./internal/controllers && cd internal/controllers &&
//	for i in 1 2 3 4 5 6; do /tmp/controllers.test -test.run '^$' -test.bench BenchmarkFeed_RelistOf150000Pods \
//	  -test.benchmem -test.benchtime 1x; done | benchstat -col /feed -
func BenchmarkFeed_RelistOf150000Pods(b *testing.B) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	nodes, pods := ts.LargeCluster()
	for _, n := range nodes {
		if err := h.Add(n); err != nil {
			b.Fatal(err)
		}
	}
	informer := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	sync := &podSync{handler: h, log: logr.Discard()}
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, apply: sync.apply, log: logr.Discard(),
		ctx: b.Context(), retrying: map[types.NamespacedName]struct{}{}}
	for _, p := range pods {
		if err := informer.Add(p); err != nil {
			b.Fatal(err)
		}
		f.onAdd(p, true)
	}
	versionOnly := func(o, n client.Object) bool { return o.GetResourceVersion() != n.GetResourceVersion() }
	for _, variant := range []string{"as-is", "version-only", "reader"} {
		b.Run("feed="+variant, func(b *testing.B) {
			f.changed, f.store = podChanged, informer
			switch variant {
			case "version-only":
				f.changed = versionOnly
			case "reader":
				f.store = copyingStore{informer}
			}
			var heap runtime.MemStats
			for b.Loop() {
				b.StopTimer()
				relisted := make([]*corev1.Pod, len(pods))
				for i, p := range pods {
					// Decoded again, and transformed: podTransform hands it the lists,
					// labels and owner references of the pods of the same content.
					relisted[i] = p.DeepCopy()
					relisted[i].Labels, relisted[i].OwnerReferences = p.Labels, p.OwnerReferences
					for c := range p.Spec.Containers {
						relisted[i].Spec.Containers[c].Resources = p.Spec.Containers[c].Resources
					}
				}
				f.pending = nil
				b.StartTimer()
				for i, p := range relisted {
					if err := informer.Update(p); err != nil {
						b.Fatal(err)
					}
					f.onUpdate(pods[i], p)
				}
				for _, req := range f.pending {
					if _, err := f.Reconcile(b.Context(), req); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				pods, relisted = relisted, nil
				st, _ := h.PodState(types.NamespacedName{Namespace: pods[0].Namespace, Name: pods[0].Name})
				if held := st.APIPod == pods[0]; held != (variant == "as-is") {
					b.Fatalf("%s: the cache holds the informer's object: %v", variant, held)
				}
				runtime.GC()
				runtime.ReadMemStats(&heap)
				b.StartTimer()
			}
			b.ReportMetric(float64(heap.HeapAlloc)/(1<<20), "heap-MB")
		})
	}
}
