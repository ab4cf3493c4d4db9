package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sharedLookup returns a function that finds an object in its informer's store and hands
// out the informer's own object, not a copy. A controller-runtime Get, even with deep copies
// disabled, copies the top-level struct into the caller's object; the cache keeps what it
// is given, so every pod would be held twice (the informer's and the cache's; 176 MB at
// 150,000 pods). The cache never modifies the objects it is fed.
func sharedLookup[T client.Object](ctx context.Context, informers cache.Informers, obj T) (func(types.NamespacedName) (T, bool, error), error) {
	inf, err := informers.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("getting the informer of %T: %w", obj, err)
	}
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("the informer of %T (%T) does not expose its store", obj, inf)
	}
	store := withStore.GetStore()
	return func(key types.NamespacedName) (T, bool, error) {
		var zero T
		k := key.Name
		if key.Namespace != "" {
			k = key.Namespace + "/" + key.Name
		}
		item, exists, err := store.GetByKey(k)
		if err != nil || !exists {
			return zero, false, err
		}
		o, ok := item.(T)
		if !ok {
			return zero, false, fmt.Errorf("the informer of %T holds a %T under %s", obj, item, k)
		}
		return o, true, nil
	}, nil
}
