package devicestore

// nodeSet is the nodes a version of a device is counted on: most devices are node-local,
// on one node, kept without a map.
type nodeSet struct {
	one  string              // the node, while the set has at most one and many is nil
	many map[string]struct{} // the nodes, once a second one came
}

func (ns *nodeSet) len() int {
	if ns.many != nil {
		return len(ns.many)
	}
	if ns.one != "" {
		return 1
	}
	return 0
}

func (ns *nodeSet) has(node string) bool {
	if ns.many != nil {
		_, ok := ns.many[node]
		return ok
	}
	return node != "" && ns.one == node
}

func (ns *nodeSet) add(node string) {
	switch {
	case ns.many != nil:
		ns.many[node] = struct{}{}
	case ns.one == "" || ns.one == node:
		ns.one = node
	default:
		ns.many = map[string]struct{}{ns.one: {}, node: {}}
		ns.one = ""
	}
}

func (ns *nodeSet) remove(node string) {
	if ns.many != nil {
		delete(ns.many, node)
	} else if ns.one == node {
		ns.one = ""
	}
}

// all ranges over the nodes.
func (ns *nodeSet) all(yield func(string) bool) {
	if ns.many == nil && ns.one != "" {
		yield(ns.one)
	}
	for node := range ns.many {
		if !yield(node) {
			return
		}
	}
}
