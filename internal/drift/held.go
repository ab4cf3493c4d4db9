package drift

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// VersionReader is a Cache that reads its versions where they are (the handler), without
// the map of strings LastSeenVersions copies them into. Compared with a source that holds
// its objects (InformerSource), a kind is compared without a string or an allocation per
// object: the source's objects are indexed by their names (strings shared with the source's
// objects, in one table sized up front), the cache's walked in parts and each looked up there;
// only differences are rendered.
type VersionReader interface {
	Cache
	// RangeVersions calls fn with the key and version of every object of kind the cache
	// holds (ownerType: a workload owner's type, "" for other kinds; key.Namespace "" for
	// cluster-scoped kinds). An object may be produced twice when it changes meanwhile.
	// False when the cache keeps no such kind.
	RangeVersions(kind stores.Kind, fn func(ownerType string, key types.NamespacedName, version string)) bool
	// LastSeenVersion returns the version of one object the cache holds; false when none.
	LastSeenVersion(kind stores.Kind, ownerType string, key types.NamespacedName) (string, bool)
}

// heldSource is a Source whose objects stay where they are after they are listed (an
// informer's store): the comparison refers to their names instead of copying them.
type heldSource interface {
	Source
	// held returns the listing's objects, not copied.
	held(ctx context.Context, l Listing) ([]any, error)
}

// heldRef names one object of a heldSource (its strings, not copies).
type heldRef struct {
	ownerType string
	key       types.NamespacedName
}

// heldVersion is a heldRef's version, and whether the cache holds the object.
type heldVersion struct {
	version string
	seen    bool
}

// refable reports whether every listing of kind is keyed by names the cache's
// RangeVersions gives (a listing keyed otherwise, like a PodGroup source's, is not).
func refable(listings []Listing, kind stores.Kind) bool {
	for _, l := range listings {
		if l.Kind == kind && l.key != nil && l.ownerType == "" {
			return false
		}
	}
	return true
}

// renderKey renders a key as Listing.Key does.
func renderKey(ownerType string, key types.NamespacedName) string {
	switch {
	case ownerType != "":
		return ownerType + "/" + key.Namespace + "/" + key.Name
	case key.Namespace != "":
		return key.Namespace + "/" + key.Name
	}
	return key.Name
}

// compareHeld is compareKind for a VersionReader and a heldSource; false when the cache
// keeps no such kind (compareKind then compares as it does for any cache).
func compareHeld(ctx context.Context, c VersionReader, src heldSource, keep KeepFunc, listings []Listing, kind stores.Kind) ([]Difference, bool, error) {
	var items [][]any
	n := 0
	for _, l := range listings {
		if l.Kind != kind {
			continue
		}
		listed, err := src.held(ctx, l)
		if err != nil {
			return nil, false, fmt.Errorf("listing %s: %w", kind, err)
		}
		items, n = append(items, listed), n+len(listed)
	}
	cluster := make(map[heldRef]heldVersion, n)
	i := 0
	for _, l := range listings {
		if l.Kind != kind {
			continue
		}
		for _, item := range items[i] {
			obj, ok := item.(client.Object)
			if !ok {
				return nil, false, fmt.Errorf("listing %s: the source of %T holds a %T", kind, l.Object, item)
			}
			if keep != nil {
				if ok, err := keep(ctx, kind, obj); err != nil {
					return nil, false, fmt.Errorf("listing %s: %w", kind, err)
				} else if !ok {
					continue
				}
			}
			ref := heldRef{l.ownerType, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
			cluster[ref] = heldVersion{version: obj.GetResourceVersion()}
		}
		i++
	}
	var diffs []Difference
	ok := c.RangeVersions(kind, func(ownerType string, key types.NamespacedName, version string) {
		ref := heldRef{ownerType, key}
		held, found := cluster[ref]
		switch {
		case !found:
			diffs = append(diffs, Difference{Kind: kind, Key: renderKey(ownerType, key), Problem: NotInCluster, CacheVersion: version})
			return
		case held.version != version:
			diffs = append(diffs, Difference{Kind: kind, Key: renderKey(ownerType, key), Problem: StaleInCache, CacheVersion: version, APIVersion: held.version})
		}
		if !held.seen {
			held.seen = true
			cluster[ref] = held
		}
	})
	if !ok {
		return nil, false, nil
	}
	for ref, held := range cluster {
		if !held.seen {
			diffs = append(diffs, Difference{Kind: kind, Key: renderKey(ref.ownerType, ref.key), Problem: MissingFromCache, APIVersion: held.version})
		}
	}
	return diffs, true, nil
}

// cachedVersion reads the cache's version of the object of kind named key again: one
// lookup in a VersionReader when a listing of kind names it, else in the versions of the
// whole kind (copied once per kind into cached).
func cachedVersion(c Cache, listings []Listing, kind stores.Kind, key string, cached map[stores.Kind]map[string]string) (string, bool) {
	if vr, ok := c.(VersionReader); ok && refable(listings, kind) {
		for _, l := range listings {
			if l.Kind != kind {
				continue
			}
			if name, ok := l.ObjectKey(key); ok {
				return vr.LastSeenVersion(kind, l.ownerType, name)
			}
		}
	}
	if cached[kind] == nil {
		cached[kind] = c.LastSeenVersions(kind)
	}
	version, ok := cached[kind][key]
	return version, ok
}
