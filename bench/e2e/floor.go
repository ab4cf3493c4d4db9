package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

// watchFloor is a pod informer in the harness that records when each churn write's event
// reached it: the delay of the API server's watch alone, the floor under multicache's lag.
// It holds the pods' metadata only: with whole pods the harness's heap was 0.85 GB after
// collection at large, and its collections (a second of marking every few seconds) delayed
// the reads of both subjects' counters alike.
type watchFloor struct {
	mu   sync.Mutex
	seen [numOps]map[string]time.Time
}

// startWatchFloor starts the informer and waits until it has synced.
func startWatchFloor(ctx context.Context, cfg *rest.Config) (*watchFloor, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := &watchFloor{}
	for op := range f.seen {
		f.seen[op] = map[string]time.Time{}
	}
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	inf := factory.ForResource(corev1.SchemeGroupVersion.WithResource("pods")).Informer()
	if err := inf.SetTransform(crcache.TransformStripManagedFields()); err != nil {
		return nil, err
	}
	var synced atomic.Bool
	record := func(op int, obj any) {
		if !synced.Load() {
			return
		}
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
			now := time.Now()
			f.mu.Lock()
			f.seen[op][p.Namespace+"/"+p.Name] = now
			f.mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record(opCreate, obj) },
		UpdateFunc: func(_, obj any) { record(opUpdate, obj) },
		DeleteFunc: func(obj any) { record(opDelete, obj) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("the harness's pod informer did not sync")
	}
	synced.Store(true)
	return f, nil
}

// lag returns when the event of op on key reached the informer, minus ret (zero if it came
// first), and whether it came at all.
func (f *watchFloor) lag(op int, key string, ret time.Time) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[op][key]
	if !ok {
		return 0, false
	}
	delete(f.seen[op], key)
	return max(0, t.Sub(ret)), true
}
