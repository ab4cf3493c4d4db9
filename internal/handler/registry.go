package handler

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Factory builds a store from the CacheHandler. An error (a store that cannot work with
// this configuration) stops the start-up and is reported with the store's name.
type Factory func(*stores.CacheHandler) (store.Store, error)

// Registration is one store the handler can build: its name (the value --stores takes, the
// `store` label of the metrics, its key in the dump and in snapshots) and its factory.
type Registration struct {
	Name stores.Name
	New  Factory
}

// Registry lists the stores the handler can build, in fan-out order (the order events
// reach them), the PodStore last. It is built in code, from BuiltIn and With: no init(),
// nothing registered at a distance. A built-in name always holds the built-in store (With
// refuses a name taken), so the handler reaches each built-in store by its type; a store
// registered beyond them only through the contract.
type Registry []Registration

// BuiltIn returns the registry of multicache's own stores, in stores.FanOutOrder.
func BuiltIn() Registry {
	return Registry{
		{stores.NodeStoreName, func(h *stores.CacheHandler) (store.Store, error) { return nodestore.New(h), nil }},
		{stores.PodGroupStoreName, func(h *stores.CacheHandler) (store.Store, error) { return podgroupstore.New(h), nil }},
		{stores.PDBStoreName, func(h *stores.CacheHandler) (store.Store, error) { return pdbstore.New(h), nil }},
		{stores.MovementStoreName, func(h *stores.CacheHandler) (store.Store, error) { return movementstore.New(h), nil }},
		{stores.ReservationStoreName, func(h *stores.CacheHandler) (store.Store, error) { return reservationstore.New(h), nil }},
		{stores.DeviceStoreName, func(h *stores.CacheHandler) (store.Store, error) { return devicestore.New(h), nil }},
		{stores.PodStoreName, func(h *stores.CacheHandler) (store.Store, error) { return podstore.New(h), nil }},
	}
}

// With returns a copy of r with more stores, inserted in the order given just before the
// PodStore: like every store, they still read a pod's previous state during a pod event. A
// name must be a DNS label (it is a flag value and a metric label) not already taken, and
// the factory must be set; every problem is reported, naming the store.
func (r Registry) With(regs ...Registration) (Registry, error) {
	out := make(Registry, 0, len(r)+len(regs))
	var podStore *Registration
	for i := range r {
		if r[i].Name == stores.PodStoreName {
			podStore = &r[i]
			continue
		}
		out = append(out, r[i])
	}
	taken := map[stores.Name]bool{}
	for _, reg := range r {
		taken[reg.Name] = true
	}
	var errs []error
	for _, reg := range regs {
		switch {
		case reg.Name == "":
			errs = append(errs, errors.New("a store needs a name"))
		case len(validation.IsDNS1123Label(string(reg.Name))) > 0:
			errs = append(errs, fmt.Errorf("store name %q: %s", reg.Name, strings.Join(validation.IsDNS1123Label(string(reg.Name)), "; ")))
		case taken[reg.Name]:
			errs = append(errs, fmt.Errorf("store name %q is taken; known stores: %s", reg.Name, joinNames(r.Names())))
		case reg.New == nil:
			errs = append(errs, fmt.Errorf("store %q has no factory", reg.Name))
		default:
			taken[reg.Name] = true
			out = append(out, reg)
		}
	}
	if podStore != nil {
		out = append(out, *podStore)
	}
	return out, errors.Join(errs...)
}

// Names returns the names of the registered stores, in fan-out order.
func (r Registry) Names() []stores.Name {
	out := make([]stores.Name, len(r))
	for i, reg := range r {
		out[i] = reg.Name
	}
	return out
}

func joinNames(names []stores.Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
