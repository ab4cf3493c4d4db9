package devicestore

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// poolKey names a resource pool: a driver's pool.
type poolKey struct{ driver, pool string }

func (k poolKey) String() string { return k.driver + "/" + k.pool }

func poolKeyOf(slice *resourcev1.ResourceSlice) poolKey {
	return poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}
}

// pool is one resource pool: its slices (every generation) and what it publishes to each
// node it reaches.
type pool struct {
	key    poolKey
	slices map[string]*resourcev1.ResourceSlice
	// devices are the devices the pool publishes to some node, by ID (published.go).
	devices map[DeviceID]*device
	// reach is what the pool gives each node it reaches.
	reach map[string]*reach
	// targets are the slices' node selections, sorted by slice name, parsed once per
	// change of the pool.
	targets []sliceTargets
	// errs are the node selectors that do not parse (they select no node).
	errs []error
}

func newPool(key poolKey) *pool {
	return &pool{key: key, slices: map[string]*resourcev1.ResourceSlice{}, devices: map[DeviceID]*device{}, reach: map[string]*reach{}}
}

// reach is what a pool gives one node, as kube-scheduler's pool gathering finds it.
type reach struct {
	generation int64
	// incomplete: the generation lacks some of its resourceSliceCount slices; invalid: it
	// names a device twice. Either way no device of the pool counts on the node.
	incomplete, invalid bool
	devices             []*published
}

// gather recomputes what a pool gives every node it reaches, after one of its slices
// changed.
func (s *Store) gather(p *pool) {
	p.errs, p.targets = nil, p.targets[:0]
	for _, name := range slices.Sorted(maps.Keys(p.slices)) {
		p.targets = append(p.targets, s.targetsOf(p, p.slices[name]))
	}
	targets := p.targets
	selective := slices.ContainsFunc(targets, sliceTargets.selective)
	if selective {
		s.selective[p.key] = p
	} else {
		delete(s.selective, p.key)
	}
	nodes := sets.KeySet(p.reach) // a node the pool no longer reaches loses it
	for _, t := range targets {
		nodes.Insert(t.namedNodes()...)
	}
	if selective {
		nodes = nodes.Union(sets.KeySet(s.nodes))
	}
	for name := range nodes {
		s.gatherFor(p, targets, name)
	}
	s.dropUnreached(p)
}

// gatherNode recomputes what every selective pool gives one node, after the node changed.
func (s *Store) gatherNode(name string) {
	for _, p := range s.selective {
		s.gatherFor(p, p.targets, name)
		s.dropUnreached(p)
	}
}

// gatherFor is kube-scheduler's pool gathering for one pool and one node: of the slices
// reaching the node, the newest generation; complete when it has resourceSliceCount
// slices; otherwise the pool is ignored when a newer generation exists (reaching other
// nodes), and incomplete when not all slices of that generation exist. A node the cache
// does not know (some slice names it: reported by CheckInvariants) is only reached by name.
func (s *Store) gatherFor(p *pool, targets []sliceTargets, name string) {
	node, known := s.nodes[name]
	if !known {
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	var relevant []sliceTargets
	gen, newest, atNewest := int64(-1), int64(-1), 0
	for _, t := range targets {
		g := t.slice.Spec.Pool.Generation
		if g > newest {
			newest, atNewest = g, 0
		}
		if g == newest {
			atNewest++
		}
		if !t.reaches(node, known) {
			continue
		}
		switch {
		case g > gen:
			gen, relevant = g, []sliceTargets{t}
		case g == gen:
			relevant = append(relevant, t)
		}
	}
	var r *reach
	if len(relevant) > 0 {
		switch want := relevant[0].slice.Spec.Pool.ResourceSliceCount; {
		case int64(len(relevant)) == want:
			r = &reach{generation: gen}
		case gen < newest: // a newer generation reaches other nodes: this one is ignored
		default: // the generation's other slices reach other nodes, or do not exist
			r = &reach{generation: gen, incomplete: int64(atNewest) != want}
		}
	}
	if r != nil && !r.incomplete {
		s.collect(p, relevant, node, known, r)
	}
	s.setReach(p, name, r)
}

// collect fills a complete reach with the devices reaching the node; a device name used
// twice in the generation makes the pool invalid.
func (s *Store) collect(p *pool, relevant []sliceTargets, node *corev1.Node, known bool, r *reach) {
	n := 0
	for _, t := range relevant {
		n += len(t.slice.Spec.Devices)
	}
	seen := make(map[string]bool, n)
	r.devices = make([]*published, 0, n)
	for _, t := range relevant {
		for i := range t.slice.Spec.Devices {
			d := &t.slice.Spec.Devices[i]
			if seen[d.Name] {
				r.invalid, r.devices = true, nil
				return
			}
			seen[d.Name] = true
			if !t.deviceReaches(i, node, known) {
				continue
			}
			r.devices = append(r.devices, s.publish(p, d, t.deviceShared(i)))
		}
	}
}

// setReach records what a pool gives a node and updates the node's entry.
func (s *Store) setReach(p *pool, node string, r *reach) {
	old := p.reach[node]
	if old == nil && r == nil {
		return
	}
	e, ok := s.views.Get(node)
	if !ok {
		e = nodeEntry{}
		s.views.Set(node, e)
	}
	for _, d := range old.list() {
		d.nodes.remove(node)
	}
	if r == nil {
		delete(p.reach, node)
		delete(e, p.key)
	} else {
		p.reach[node], e[p.key] = r, r
		for _, d := range r.devices {
			d.nodes.add(node)
		}
	}
	for _, d := range old.list() { // once the devices' nodes are set
		s.recount(p, d.id)
	}
	for _, d := range r.list() {
		s.recount(p, d.id)
	}
	if len(e) == 0 {
		s.views.Delete(node)
		return
	}
	s.views.Touch(node)
}

// list returns the devices of a reach, none of a nil one.
func (r *reach) list() []*published {
	if r == nil {
		return nil
	}
	return r.devices
}
