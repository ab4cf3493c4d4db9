package drift

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// compareStreamed is compareKind for a VersionReader and a source that lists in pages (the
// API): each listed object is looked up in the cache as its page arrives, so neither the
// cache's versions nor the cluster's are copied into maps of rendered keys. What it keeps
// is the names of the listed objects (the strings the page decoded, not copies; see
// listedNames), to find afterwards what the cache holds that the cluster does not; only
// differences are rendered.
func compareStreamed(ctx context.Context, c VersionReader, src Source, keep KeepFunc, listings []Listing, kind stores.Kind) ([]Difference, error) {
	var diffs []Difference
	var listed listedNames
	vs, versionsOnly := src.(versionSource)
	for _, l := range listings {
		if l.Kind != kind {
			continue
		}
		var err error
		if versionsOnly && keep == nil {
			err = vs.eachVersion(ctx, l, func(key types.NamespacedName, version []byte) error {
				listed.add(l.ownerType, key)
				diffs = compareListed(c, kind, l.ownerType, key, version, diffs)
				return nil
			})
		} else {
			err = src.Each(ctx, l, func(obj client.Object) error {
				if keep != nil {
					if ok, err := keep(ctx, kind, obj); err != nil || !ok {
						return err
					}
				}
				key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
				listed.add(l.ownerType, key)
				diffs = compareListed(c, kind, l.ownerType, key, obj.GetResourceVersion(), diffs)
				return nil
			})
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", kind, err)
		}
	}
	// RangeVersions is false only for a kind the cache keeps no versions of, and Compare
	// asks only for the kinds the cache watches; were it false, every listed object is
	// reported missing above, as the map path reports it.
	c.RangeVersions(kind, func(ownerType string, key types.NamespacedName, version string) {
		if !listed.has(ownerType, key) {
			diffs = append(diffs, Difference{Kind: kind, Key: renderKey(ownerType, key), Problem: NotInCluster, CacheVersion: version})
		}
	})
	return diffs, nil
}

// compareListed appends to diffs the difference, if any, between one listed object and the
// cache; version may be a buffer of the source's (rendered only in a difference).
func compareListed[V string | []byte](c VersionReader, kind stores.Kind, ownerType string, key types.NamespacedName, version V, diffs []Difference) []Difference {
	switch cacheRV, ok := c.LastSeenVersion(kind, ownerType, key); {
	case !ok:
		return append(diffs, Difference{Kind: kind, Key: renderKey(ownerType, key), Problem: MissingFromCache, APIVersion: string(version)})
	case cacheRV != string(version):
		return append(diffs, Difference{Kind: kind, Key: renderKey(ownerType, key), Problem: StaleInCache, CacheVersion: cacheRV, APIVersion: string(version)})
	}
	return diffs
}
