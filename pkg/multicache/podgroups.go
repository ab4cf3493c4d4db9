package multicache

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodGroupKey is the key under which the cache (Reader.PodGroup, snapshots, the dump)
// holds the group of that source, namespace and name: keys of different sources never
// collide.
func PodGroupKey(source store.PodGroupSource, namespace, name string) types.NamespacedName {
	return podgroupstore.Key(source, namespace, name)
}

// PodGroupSourceOf splits a key of the cache into its source and the group's name.
func PodGroupSourceOf(key types.NamespacedName) (store.PodGroupSource, string) {
	return podgroupstore.SourceOf(key)
}
