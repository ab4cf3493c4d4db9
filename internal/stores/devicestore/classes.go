package devicestore

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

// class is a DeviceClass with its selectors compiled.
type class struct {
	class     *resourcev1.DeviceClass
	selectors []cel.CompilationResult
	// err is the first selector that does not compile or fails on some device: the class
	// then accepts no device the selector could not decide (as kube-scheduler fails them).
	err error
}

// setClass compiles a (new or changed) class and matches it against every published
// device.
func (s *Store) setClass(dc *resourcev1.DeviceClass) {
	c := &class{class: dc}
	for i, sel := range dc.Spec.Selectors {
		if sel.CEL == nil {
			continue
		}
		res := s.celCache.GetOrCompile(sel.CEL.Expression)
		if res.Error != nil {
			c.err = fmt.Errorf("class %s, selector %d: %w", dc.Name, i, res.Error)
			continue
		}
		c.selectors = append(c.selectors, res)
	}
	s.classes[dc.Name] = c
	s.rematchClass(dc.Name, c)
}

// matches reports whether every selector of the class accepts the device, evaluated by
// k8s.io/dynamic-resource-allocation/cel with the input kube-scheduler's allocator gives it.
func (s *Store) matches(c *class, d *published) bool {
	if c.err != nil && len(c.selectors) < len(c.class.Spec.Selectors) {
		return false
	}
	in := cel.Device{
		Driver:                   d.id.Driver.String(),
		AllowMultipleAllocations: d.device.AllowMultipleAllocations,
		Attributes:               d.device.Attributes,
		Capacity:                 d.device.Capacity,
	}
	for i, sel := range c.selectors {
		ok, _, err := sel.DeviceMatches(context.Background(), in)
		if err != nil {
			if c.err == nil {
				c.err = fmt.Errorf("class %s, selector %d, device %s: %w", c.class.Name, i, d.id, cel.EnhanceRuntimeError(err))
			}
			return false
		}
		if !ok {
			return false
		}
	}
	return true
}

// rematchClass matches a (new or changed) class against every published device; a nil
// class (deleted) matches none.
func (s *Store) rematchClass(name string, c *class) {
	for _, p := range s.pools {
		changed := false
		for id, e := range p.devices {
			rematched := false
			for _, v := range e.versions {
				if is := c != nil && s.matches(c, v); is != v.classes.has(name) {
					v.classes = s.classSets.with(v.classes, name, is)
					rematched = true
				}
			}
			if rematched {
				s.recount(p, id)
				changed = true
			}
		}
		if changed { // every node the pool reaches
			for node := range p.reach {
				s.views.Touch(node)
			}
		}
	}
}
