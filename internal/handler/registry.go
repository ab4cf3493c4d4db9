package handler

import (
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// registration is how to build one store.
type registration struct {
	name stores.Name
	new  func(*stores.CacheHandler) stores.Store
}

// registry lists every store in fan-out order (stores.FanOutOrder). It is the only place a
// store is known to the handler: no init() side effects, nothing registered at a distance.
var registry = []registration{
	{stores.NodeStoreName, func(h *stores.CacheHandler) stores.Store { return nodestore.New(h) }},
	{stores.PodGroupStoreName, func(h *stores.CacheHandler) stores.Store { return podgroupstore.New(h) }},
	{stores.PDBStoreName, func(h *stores.CacheHandler) stores.Store { return pdbstore.New(h) }},
	{stores.MovementStoreName, func(h *stores.CacheHandler) stores.Store { return movementstore.New(h) }},
	{stores.ReservationStoreName, func(h *stores.CacheHandler) stores.Store { return reservationstore.New(h) }},
	{stores.PodStoreName, func(h *stores.CacheHandler) stores.Store { return podstore.New(h) }},
}
