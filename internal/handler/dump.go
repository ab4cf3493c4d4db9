package handler

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Dump is the JSON view of the whole cache served at /debug/cache.
type Dump struct {
	Generation    int64  `json:"generation"`
	ComponentName string `json:"componentName"`
	SchedulerName string `json:"schedulerName"`
	SubCluster    string `json:"subCluster,omitempty"`
	// Stores are the enabled stores in fan-out order.
	Stores []stores.Name `json:"stores"`
	// Per store (an empty object when the store is disabled): see each store's Dump.
	Nodes        any `json:"nodes"`
	Pods         any `json:"pods"`
	PodGroups    any `json:"podGroups"`
	PDBs         any `json:"pdbs"`
	Movements    any `json:"movements"`
	Reservations any `json:"reservations"`
	Devices      any `json:"devices"`
	// Extensions are the stores registered beyond the built-in ones, by name.
	Extensions map[stores.Name]any `json:"extensions,omitempty"`
}

// Dump implements ClusterEventsHandler. At 150,000 pods the copy alone held the read lock
// for 0.3-0.4 s, and events waited that long at every dump, so the nodes and the pods are
// copied in parts (rangeNodes, rangePods) and rendered after the lock is released; each
// other store is copied under a hold of its own (the large ones only copy there,
// stores.DeferredDumper). Each node and each pod is shown as it was at one moment, but
// events may be applied between two parts: the dump is not one moment of the whole cache
// (Generation is the one it started at). A consistent view is a Snapshot. The debug server
// does not build it: it streams the same document with WriteDump.
func (h *Handler) Dump() *Dump {
	byName := map[stores.Name]any{}
	h.mu.RLock()
	generation := h.config.Generations().Current()
	h.mu.RUnlock()
	for _, s := range h.stores {
		if s != store.Store(h.nodes) && s != store.Store(h.pods) {
			byName[s.Name()] = h.dumpStore(s)
		}
	}
	var infos []*store.NodeInfo
	h.rangeNodes(func(part []*store.NodeInfo) {
		for _, info := range part {
			infos = append(infos, info.Clone())
		}
	})
	statuses := make(map[types.NamespacedName]podstore.KeyedStatus)
	h.rangePods(func(key types.NamespacedName, e *podstore.Entry) {
		statuses[key] = podstore.KeyedStatus{Key: key, Status: e.PodStatus}
	})
	byName[stores.NodeStoreName] = nodestore.DumpNodes(infos)
	byName[stores.PodStoreName] = podstore.DumpPods(slices.Collect(maps.Values(statuses)))
	get := func(n stores.Name) any {
		if d, ok := byName[n]; ok {
			return d
		}
		return struct{}{}
	}
	d := &Dump{
		Generation:    generation,
		ComponentName: h.config.ComponentName(),
		SchedulerName: h.config.SchedulerType(),
		Stores:        h.StoreNames(),
		Nodes:         get(stores.NodeStoreName),
		Pods:          get(stores.PodStoreName),
		PodGroups:     get(stores.PodGroupStoreName),
		PDBs:          get(stores.PDBStoreName),
		Movements:     get(stores.MovementStoreName),
		Reservations:  get(stores.ReservationStoreName),
		Devices:       get(stores.DeviceStoreName),
	}
	for _, s := range h.stores {
		if !slices.Contains(stores.FanOutOrder, s.Name()) {
			if d.Extensions == nil {
				d.Extensions = map[stores.Name]any{}
			}
			d.Extensions[s.Name()] = byName[s.Name()]
		}
	}
	if h.config.SubClusterKey() != "" {
		d.SubCluster = h.config.SubClusterKey() + "=" + h.config.SubCluster()
	}
	return d
}
