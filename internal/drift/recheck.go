package drift

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// A listing of 30,000 pods takes seconds; on a busy cluster objects change, appear and go
// while it runs, and the cache (a few milliseconds behind the API) has already applied those
// changes when it is read. Each difference is therefore read again, the cluster's side first
// and then the cache's: what a change in flight caused is gone, what is wrong stays. A cache
// side still behind is read again after recheckWait, up to recheckRounds times in all.
var (
	recheckRounds = 3
	recheckWait   = 100 * time.Millisecond
	// maxRechecked bounds the objects read one by one: past it the cache is plainly not
	// settled, and reading them (one GET each, under the client's rate limit) would cost
	// more than the listing.
	maxRechecked = 200
)

// recheck returns the differences that hold when their objects are read again.
func recheck(ctx context.Context, c Cache, src Source, keep KeepFunc, listings []Listing, diffs []Difference) ([]Difference, error) {
	if len(diffs) > maxRechecked {
		return diffs, nil
	}
	for round := 0; round < recheckRounds && len(diffs) > 0; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(recheckWait):
			}
		}
		clusterRVs := make([]string, len(diffs))
		inCluster := make([]bool, len(diffs))
		unread := make([]bool, len(diffs))
		for i, d := range diffs {
			rv, found, err := clusterVersion(ctx, src, keep, listings, d.Kind, d.Key)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				// Not read again (a 429, a timeout): reported as the listing found it.
				unread[i] = true
				continue
			}
			clusterRVs[i], inCluster[i] = rv, found
		}
		cached := map[stores.Kind]map[string]string{}
		var still []Difference
		for i, d := range diffs {
			if unread[i] {
				still = append(still, d)
				continue
			}
			cacheRV, inCache := cachedVersion(c, listings, d.Kind, d.Key, cached)
			switch {
			case inCluster[i] && !inCache:
				still = append(still, Difference{Kind: d.Kind, Key: d.Key, Problem: MissingFromCache, APIVersion: clusterRVs[i]})
			case !inCluster[i] && inCache:
				still = append(still, Difference{Kind: d.Kind, Key: d.Key, Problem: NotInCluster, CacheVersion: cacheRV})
			case inCluster[i] && cacheRV != clusterRVs[i]:
				still = append(still, Difference{Kind: d.Kind, Key: d.Key, Problem: StaleInCache, CacheVersion: cacheRV, APIVersion: clusterRVs[i]})
			}
		}
		diffs = still
	}
	return diffs, nil
}

// clusterVersion reads the object of kind named key from the first listing that holds it
// (and keep keeps), and returns its resource version; found is false when none does.
func clusterVersion(ctx context.Context, src Source, keep KeepFunc, listings []Listing, kind stores.Kind, key string) (string, bool, error) {
	for _, l := range listings {
		if l.Kind != kind {
			continue
		}
		name, ok := l.ObjectKey(key)
		if !ok {
			continue
		}
		obj, found, err := src.Get(ctx, l, name)
		if err != nil {
			return "", false, err
		}
		if !found || l.Key(obj) != key {
			continue
		}
		if keep != nil {
			if ok, err := keep(ctx, kind, obj); err != nil {
				return "", false, err
			} else if !ok {
				continue
			}
		}
		return obj.GetResourceVersion(), true, nil
	}
	return "", false, nil
}

// getFrom reads one object through a reader; found is false on NotFound.
func getFrom(ctx context.Context, r client.Reader, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	obj := l.Object.DeepCopyObject().(client.Object)
	if err := r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return obj, true, nil
}
