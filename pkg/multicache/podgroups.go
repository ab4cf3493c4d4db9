package multicache

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
)

// PodGroupSource is an API a gang can come from (--podgroup-sources).
type PodGroupSource = stores.PodGroupSource

// The PodGroup sources.
const (
	// PodGroupSourceMulticache is multicache's own PodGroup (cache.multicache.dev).
	PodGroupSourceMulticache = stores.PodGroupSourceMulticache
	// PodGroupSourceNative is Kubernetes' PodGroup (scheduling.k8s.io/v1alpha3).
	PodGroupSourceNative = stores.PodGroupSourceNative
	// PodGroupSourceSchedulerPlugins is scheduler-plugins' PodGroup (scheduling.x-k8s.io).
	PodGroupSourceSchedulerPlugins = stores.PodGroupSourceSchedulerPlugins
)

// PodGroupKey is the key under which the cache (Reader.PodGroup, snapshots, the dump)
// holds the group of that source, namespace and name: keys of different sources never
// collide.
func PodGroupKey(source PodGroupSource, namespace, name string) types.NamespacedName {
	return podgroupstore.Key(source, namespace, name)
}

// PodGroupSourceOf splits a key of the cache into its source and the group's name.
func PodGroupSourceOf(key types.NamespacedName) (PodGroupSource, string) {
	return podgroupstore.SourceOf(key)
}
