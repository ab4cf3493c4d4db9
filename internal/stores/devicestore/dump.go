package devicestore

import (
	"errors"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// NodeDump is the debug view of one node: its devices under "devices", as the node views
// of the debug server show them.
type NodeDump struct {
	Devices store.NodeDevices `json:"devices"`
}

// Dump is the debug view of the store.
type Dump struct {
	// Nodes are the nodes some pool reaches.
	Nodes map[string]NodeDump `json:"nodes"`
	// Unpublished are the devices claims hold that no counted slice publishes, with the
	// claims holding them.
	Unpublished map[string][]string `json:"unpublished,omitempty"`
	// Assumed are the claims whose allocation a scheduler assumed and the API does not show
	// yet, with the devices each holds.
	Assumed map[string][]string `json:"assumed,omitempty"`
	// ExtendedResources are the extended resources DeviceClasses serve (spec.
	// extendedResourceName), with the class serving each.
	ExtendedResources map[string]string `json:"extendedResources,omitempty"`
	// Errors are the classes and node selectors that could not be evaluated.
	Errors []string `json:"errors,omitempty"`
}

// Dump implements stores.Store.
func (s *Store) Dump() any {
	d := Dump{Nodes: map[string]NodeDump{}}
	s.views.Range(func(name string, e nodeEntry) bool {
		d.Nodes[name] = NodeDump{Devices: s.view(e)}
		return true
	})
	for id, h := range s.holders {
		if _, e := s.deviceOf(id); e != nil {
			continue
		}
		if d.Unpublished == nil {
			d.Unpublished = map[string][]string{}
		}
		d.Unpublished[id.String()] = s.claimNames(h)
	}
	if len(s.assumed) > 0 {
		d.Assumed = s.AssumedClaims()
	}
	var classErrs, poolErrs []error
	for name, c := range s.classes {
		if r := s.extended.GetExtendedResource(name); r != "" {
			if d.ExtendedResources == nil {
				d.ExtendedResources = map[string]string{}
			}
			d.ExtendedResources[r] = name
		}
		if c.err != nil {
			classErrs = append(classErrs, c.err)
		}
	}
	for _, p := range s.pools {
		poolErrs = append(poolErrs, p.errs...)
	}
	for _, err := range []error{errors.Join(classErrs...), errors.Join(poolErrs...)} {
		if err != nil {
			d.Errors = append(d.Errors, err.Error())
		}
	}
	return d
}
