package handler

import (
	"slices"

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
	// Extensions are the stores registered beyond the built-in ones, by name.
	Extensions map[stores.Name]any `json:"extensions,omitempty"`
}

// Dump implements ClusterEventsHandler. It holds the read lock only while the stores copy
// what their views need; the large views (nodes, pods) are rendered after it is released
// (stores.DeferredDumper), so a dump of 150,000 pods does not stop events for long.
func (h *Handler) Dump() *Dump {
	byName := map[stores.Name]any{}
	deferred := map[stores.Name]func() any{}
	h.mu.RLock()
	for _, s := range h.stores {
		if d, ok := s.(stores.DeferredDumper); ok {
			deferred[s.Name()] = d.DumpDeferred()
		} else {
			byName[s.Name()] = s.Dump()
		}
	}
	generation := h.config.Generations().Current()
	h.mu.RUnlock()
	for name, render := range deferred {
		byName[name] = render()
	}
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
