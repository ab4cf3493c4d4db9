package multicache

import (
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Option adds to the multicache a Command builds.
type Option func(*Command)

// WithStore registers a store: enabled by default, selectable with --stores under name,
// placed in the fan-out after the built-in stores and before the PodStore, in the order the
// options are given. name must be a DNS label not taken by another store (the built-ins are
// nodes, podgroups, pdbs, movements, reservations, devices, pods); the factory's store must return
// name from Name(). Problems are reported when the command runs.
func WithStore(name string, factory StoreFactory) Option {
	return func(c *Command) {
		c.stores = append(c.stores, handler.Registration{Name: store.Name(name), New: storeFactory(factory)})
	}
}

// WithSibling registers a sibling controller, built once the cache exists and started once
// it caught up (on every replica, or on the leader only if it says it needs leader
// election). A sibling with flags of its own is registered with WithSiblingSettings.
func WithSibling(factory SiblingFactory) Option {
	return func(c *Command) { c.siblings = append(c.siblings, factory) }
}
