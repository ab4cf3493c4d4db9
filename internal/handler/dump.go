package handler

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
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
}

// Dump implements ClusterEventsHandler.
func (h *Handler) Dump() *Dump {
	h.mu.RLock()
	defer h.mu.RUnlock()
	byName := map[stores.Name]any{}
	for _, s := range h.stores {
		byName[s.Name()] = s.Dump()
	}
	get := func(n stores.Name) any {
		if d, ok := byName[n]; ok {
			return d
		}
		return struct{}{}
	}
	d := &Dump{
		Generation:    h.config.Generations().Current(),
		ComponentName: h.config.ComponentName(),
		SchedulerName: h.config.SchedulerType(),
		Stores:        h.StoreNames(),
		Nodes:         get(stores.NodeStoreName),
		Pods:          get(stores.PodStoreName),
		PodGroups:     get(stores.PodGroupStoreName),
		PDBs:          get(stores.PDBStoreName),
		Movements:     get(stores.MovementStoreName),
		Reservations:  get(stores.ReservationStoreName),
	}
	if h.config.SubClusterKey() != "" {
		d.SubCluster = h.config.SubClusterKey() + "=" + h.config.SubCluster()
	}
	return d
}
