package controllers

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// storeInformers hands out one informer whose store is store.
type storeInformers struct {
	cache.Informers
	store toolscache.Store
}

type storeInformer struct {
	cache.Informer
	store toolscache.Store
}

func (s storeInformer) GetStore() toolscache.Store { return s.store }

func (s storeInformers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return storeInformer{store: s.store}, nil
}

// versions is a feed that reports what the cache holds and never counts a reconcile.
type versions map[types.NamespacedName]string

func (v versions) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, nil
}

func (v versions) CachedVersion(key types.NamespacedName) (string, bool) {
	rv, ok := v[key]
	return rv, ok
}

func TestCatchUp_SweepCountsKeysTheCacheAlreadyHoldsRight(t *testing.T) {
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "right", ResourceVersion: "5"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stale", ResourceVersion: "9"}},
	} {
		if err := store.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	cached := versions{{Namespace: "ns", Name: "right"}: "5", {Namespace: "ns", Name: "stale"}: "8"}
	c := NewCatchUp(storeInformers{store: store}, logr.Discard(), nil)
	c.Track("pod-feed", &corev1.Pod{}, cached)
	c.arm("pod-feed", []string{"ns/right", "ns/stale", "ns/gone"})
	c.sweep(context.Background())
	if c.CaughtUp() {
		t.Fatal("caught up while the cache holds an old version of ns/stale")
	}
	if got := c.Status(); got != "pod-feed: 1 of 3 initial objects not applied" {
		t.Errorf("after the sweep: %q (ns/right is held at the informer's version, ns/gone is in neither)", got)
	}
	cached[types.NamespacedName{Namespace: "ns", Name: "stale"}] = "9"
	c.sweep(context.Background())
	if !c.CaughtUp() {
		t.Errorf("not caught up once the cache holds every key right: %q", c.Status())
	}
}
