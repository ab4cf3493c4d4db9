package controllers

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkFeed_AChangeBehindARelistOf30000Pods measures how long the pod feed's delivery
// takes, on a cache of 1,000 nodes and 30,000 pods with every built-in store, to hand the
// cache a change that comes right after a relist: the informer first hands over the 30,000
// pods again (same versions, new objects), then the changed pod. Run:
//
//	go test -run '^$' -bench BenchmarkFeed_AChangeBehindARelistOf30000Pods -benchtime 5x ./internal/controllers
func BenchmarkFeed_AChangeBehindARelistOf30000Pods(b *testing.B) {
	const nodes, pods = 1000, 30000
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for i := range nodes {
		if err := h.Add(ts.MakeNode(fmt.Sprintf("n-%04d", i), "64", "256Gi")); err != nil {
			b.Fatal(err)
		}
	}
	sync := &podSync{handler: h, log: logr.Discard()}
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, apply: sync.apply, changed: podChanged,
		log: logr.Discard(), ctx: b.Context(), retrying: map[types.NamespacedName]struct{}{}}
	informer := make([]*corev1.Pod, pods)
	for i := range pods {
		informer[i] = ts.MakePod("ns", fmt.Sprintf("p-%05d", i), ts.OnNode(fmt.Sprintf("n-%04d", i%nodes)),
			ts.Requests("100m", "128Mi"), ts.WithUID(fmt.Sprint(i)), ts.WithResourceVersion(fmt.Sprint(i+1)))
		f.onAdd(informer[i], true)
	}
	last := types.NamespacedName{Namespace: "ns", Name: informer[pods-1].Name}
	rv := pods
	for b.Loop() {
		b.StopTimer()
		relisted := make([]*corev1.Pod, pods)
		for i, p := range informer {
			relisted[i] = p.DeepCopy()
		}
		rv++
		changed := relisted[pods-1].DeepCopy()
		changed.ResourceVersion = fmt.Sprint(rv)
		f.pending = nil
		b.StartTimer()
		for i, p := range relisted {
			f.onUpdate(informer[i], p)
		}
		f.onUpdate(relisted[pods-1], changed)
		b.StopTimer()
		if st, ok := h.PodState(last); !ok || st.APIPod != changed {
			b.Fatal("the change after the relist was not applied")
		}
		copy(informer, relisted)
		informer[pods-1] = changed
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s-until-the-change/op")
}
