package devicestore

import (
	"slices"
	"strings"
)

// classSet is the DeviceClasses a device is in: sorted names, never changed once made. The
// store interns them, so the devices in the same classes (most devices of a cluster are in
// the same few) share one set, and a device whose classes change gets another set.
type classSet struct {
	names []string
}

func (c *classSet) has(name string) bool {
	_, found := slices.BinarySearch(c.names, name)
	return found
}

// maxClassSets bounds the interned sets and the steps between them; past it they are
// forgotten and made again (sets are compared by pointer only to skip work: two sets with
// the same names are still equal).
const maxClassSets = 1024

// classSets interns class sets.
type classSets struct {
	empty *classSet
	byKey map[string]*classSet
	// steps are the sets one class more or less than a set, found before.
	steps map[classStep]*classSet
}

type classStep struct {
	from *classSet
	name string
	in   bool
}

func newClassSets() *classSets {
	return &classSets{empty: &classSet{}, byKey: map[string]*classSet{}, steps: map[classStep]*classSet{}}
}

// with returns from with the class name in it (in) or not.
func (cs *classSets) with(from *classSet, name string, in bool) *classSet {
	if from.has(name) == in {
		return from
	}
	step := classStep{from, name, in}
	if to, ok := cs.steps[step]; ok {
		return to
	}
	var names []string
	if in {
		i, _ := slices.BinarySearch(from.names, name)
		names = slices.Insert(slices.Clone(from.names), i, name)
	} else {
		names = slices.DeleteFunc(slices.Clone(from.names), func(n string) bool { return n == name })
	}
	if len(cs.byKey) >= maxClassSets || len(cs.steps) >= maxClassSets {
		clear(cs.byKey)
		clear(cs.steps)
	}
	key := strings.Join(names, "\x00") // class names are DNS subdomains: no NUL
	to := cs.byKey[key]
	if to == nil {
		to = &classSet{names: names}
		if len(names) == 0 {
			to = cs.empty
		}
		cs.byKey[key] = to
	}
	cs.steps[step] = to
	return to
}
