package nodestore

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// recomputedPerCheck bounds how many pods one check recomputes the requests of (the costly
// part: kube-scheduler's helper allocates); at most ceil(held / recomputedPerCheck) checks
// go by before every pod has been recomputed.
var recomputedPerCheck = 10000

// CheckInvariants implements stores.Store: CheckInvariantsDeferred, finished at once.
func (s *Store) CheckInvariants() []error { return s.CheckInvariantsDeferred()() }

// heldPod is a pod (or placeholder) a node holds, with what it was charged.
type heldPod struct {
	pod         *corev1.Pod
	charge      store.Resources // never mutated once remembered
	remembered  bool
	placeholder bool
}

// nodeCheck is what the check copies of one node under the lock.
type nodeCheck struct {
	name                                 string
	requested, bestEffort, reserved, dra store.Resources
	held                                 []heldPod
	// draServed are the resources, of those its pods request, that DRA serves on the node.
	draServed map[corev1.ResourceName]bool
}

// CheckInvariantsDeferred implements stores.DeferredChecker. For every node: requested equals
// the sum of its guaranteed pods plus its placeholders, best-effort requested the sum of its
// best-effort pods, reserved the sum of its placeholders, DRA-served requested the sum of
// what DRA serves of them all (all from the remembered charges, split as extended.go does);
// the pools follow the merge rule; every pod is bound there and not terminal; something
// still refers to the node. Across nodes: no pod is on two nodes; there is one remembered
// charge for each pod and placeholder held, no more; and the remembered charge of a pod is
// its requests, recomputed for a rotating share of the pods each check (recomputedPerCheck).
//
// Under the lock it only copies each node's sums and the pointers and charges of what it
// holds, and checks what is per node (pools, generation); the rest runs in the function it
// returns. It is BeginCheck and CopyNodes of every node under one hold of the lock.
func (s *Store) CheckInvariantsDeferred() func() []error {
	c := s.BeginCheck()
	infos := make([]*store.NodeInfo, 0, s.nodes.Len())
	s.Range(func(info *store.NodeInfo) bool {
		infos = append(infos, info)
		return true
	})
	c.CopyNodes(infos, nil)
	return c.Finish
}

// Check is one invariant check of the store done in parts (see the handler's check in
// parts): BeginCheck and each CopyNodes run with the handler's read lock held, each under
// its own hold if the caller likes; Finish runs after it is released. Each node is copied
// under one hold, so what is per node is consistent; what spans nodes (a pod on two nodes)
// may see an event applied between two parts, and the caller confirms such a finding.
type Check struct {
	s     *Store
	errs  []error
	nodes []nodeCheck
	// share of shares is the rotating share of pods whose requests this check recomputes.
	share, shares uint64
}

// BeginCheck, with the handler's read lock held, checks that there is one remembered charge
// per pod and placeholder held, and returns the check; CopyNodes then copies the nodes.
func (s *Store) BeginCheck() *Check {
	c := &Check{s: s}
	held := 0
	s.nodes.Range(func(_ string, info *store.NodeInfo) bool {
		held += len(info.Pods) + len(info.Placeholders)
		return true
	})
	if len(s.charges) != held {
		c.errs = append(c.errs, fmt.Errorf("%d charges remembered for the %d pods and placeholders held", len(s.charges), held))
	}
	c.shares = uint64(max(1, (held+recomputedPerCheck-1)/recomputedPerCheck))
	c.share = s.checks.Add(1) % c.shares
	return c
}

// CopyNodes, with the handler's read lock held, copies what the check needs of these nodes
// (the store's live NodeInfos) and checks what is per node. onPod, when set, is called for
// each pod (not placeholder) a node holds, under the same hold.
func (c *Check) CopyNodes(infos []*store.NodeInfo, onPod func(node string, pod *corev1.Pod)) {
	s := c.s
	for _, info := range infos {
		n := nodeCheck{name: info.Name, requested: info.Requested.Clone(), bestEffort: info.BestEffortRequested.Clone(),
			reserved: info.Reserved.Clone(), dra: info.DRARequested.Clone(), held: make([]heldPod, 0, len(info.Pods)+len(info.Placeholders))}
		for i, list := range [][]*corev1.Pod{info.Pods, info.Placeholders} {
			for _, p := range list {
				charge, ok := s.charges[p]
				for name := range charge.Scalar {
					if _, decided := n.draServed[name]; !decided {
						if n.draServed == nil {
							n.draServed = map[corev1.ResourceName]bool{}
						}
						n.draServed[name] = s.draServed(info, name)
					}
				}
				if i == 0 {
					if err := s.checkExtendedClaim(info.Name, p, charge, n.draServed); err != nil {
						c.errs = append(c.errs, err)
					}
				}
				n.held = append(n.held, heldPod{pod: p, charge: charge, remembered: ok, placeholder: i == 1})
				if i == 0 && onPod != nil {
					onPod(info.Name, p)
				}
			}
		}
		c.nodes = append(c.nodes, n)
		alloc, capacity, be := MergedPools(info.Node, info.NMNode, info.CNR)
		if !alloc.Equal(info.Allocatable) || !capacity.Equal(info.Capacity) || !be.Equal(info.BestEffortAllocatable) {
			c.errs = append(c.errs, fmt.Errorf("node %s: pools do not follow the merge rule of its sources", info.Name))
		}
		if info.Node == nil && info.NMNode == nil && info.CNR == nil && len(info.Pods) == 0 && len(info.Placeholders) == 0 {
			c.errs = append(c.errs, fmt.Errorf("node %s: kept although nothing refers to it", info.Name))
		}
		if g := s.nodes.Generation(info.Name); g != info.Generation {
			c.errs = append(c.errs, fmt.Errorf("node %s: generation %d, the change list says %d", info.Name, info.Generation, g))
		}
	}
}

// Holds reports, with the handler's read lock held, whether a node holds this very pod
// object (it has a remembered charge).
func (s *Store) Holds(pod *corev1.Pod) bool {
	_, ok := s.charges[pod]
	return ok
}

// HoldsKey reports, with the handler's read lock held, whether a node holds a pod of this
// key, this very object or another copy (a walk of the node's pods).
func (s *Store) HoldsKey(node string, key types.NamespacedName) bool {
	info, ok := s.nodes.Get(node)
	if !ok {
		return false
	}
	return slices.ContainsFunc(info.Pods, func(p *corev1.Pod) bool { return p.Namespace == key.Namespace && p.Name == key.Name })
}

// Finish checks, without the lock, what the copies hold: the sums, the recomputed
// requests, no pod on two nodes, every pod bound to its node and not terminal.
func (chk *Check) Finish() []error {
	errs, nodes, share, shares := chk.errs, chk.nodes, chk.share, chk.shares
	total := 0
	for _, c := range nodes {
		total += len(c.held)
	}
	// Every pod held, with a hash of its key, sorted by the hash after to find one on two
	// nodes: a slice allocates a fraction of what a map of 150,000 keys did at each check,
	// and comparing hashes reads no pod (sorting by key read two pods a comparison).
	placed := make([]placedPod, 0, total)
	var keys maphash.Hash
	var y yield.Yielder
	i := uint64(0)
	for n, c := range nodes {
		var requested, bestEffort, reserved, dra store.Resources
		served := func(name corev1.ResourceName) bool { return c.draServed[name] }
		for _, h := range c.held {
			y.Step()
			p := h.pod
			if !h.remembered {
				errs = append(errs, fmt.Errorf("node %s: pod %s is held with no remembered charge", c.name, store.PodKey(p)))
			} else if i%shares == share {
				if req := chk.s.acct.PodRequests(p); !h.charge.Equal(req) {
					errs = append(errs, fmt.Errorf("node %s: pod %s was charged %v, its requests are %v",
						c.name, store.PodKey(p), h.charge.ResourceList(), req.ResourceList()))
				}
			}
			i++
			charge, draPart := split(h.charge, served)
			dra.Add(draPart)
			if h.placeholder {
				requested.Add(charge)
				reserved.Add(charge)
				continue
			}
			placed = append(placed, placedPod{podKeyHash(&keys, p), p, n})
			if p.Spec.NodeName != c.name {
				errs = append(errs, fmt.Errorf("node %s: pod %s is bound to %q", c.name, store.PodKey(p), p.Spec.NodeName))
			}
			if store.IsTerminal(p) {
				errs = append(errs, fmt.Errorf("node %s: terminal pod %s is still charged", c.name, store.PodKey(p)))
			}
			if store.IsBestEffort(p) {
				bestEffort.Add(charge)
			} else {
				requested.Add(charge)
			}
		}
		for _, sum := range []struct {
			what      string
			got, want store.Resources
		}{
			{"requested", c.requested, requested},
			{"best-effort requested", c.bestEffort, bestEffort},
			{"reserved", c.reserved, reserved},
			{"DRA-served requested", c.dra, dra},
		} {
			if !sum.got.Equal(sum.want) {
				errs = append(errs, fmt.Errorf("node %s: %s is %v, its pods' charges sum to %v", c.name, sum.what, sum.got.ResourceList(), sum.want.ResourceList()))
			}
		}
	}
	return append(errs, onTwoNodes(placed, nodes, &y)...)
}

// podKeyHash hashes a pod's namespace and name (a variable: a test makes every key collide).
var podKeyHash = func(h *maphash.Hash, p *corev1.Pod) uint64 {
	h.Reset()
	h.WriteString(p.Namespace)
	h.WriteByte('/')
	h.WriteString(p.Name)
	return h.Sum64()
}

// onTwoNodes reports each pod of placed held by more than one node, naming the nodes in
// order, the pods in the order of their keys. It sorts placed by hash (yielding as it
// compares: a sort of 150,000 takes over 10 ms); only pods of one hash are compared by key.
func onTwoNodes(placed []placedPod, nodes []nodeCheck, y *yield.Yielder) []error {
	slices.SortFunc(placed, func(a, b placedPod) int {
		y.Step()
		return cmp.Compare(a.hash, b.hash)
	})
	type found struct {
		key types.NamespacedName
		err error
	}
	var dups []found
	for i := 0; i < len(placed); {
		j := i + 1
		for j < len(placed) && placed[j].hash == placed[i].hash {
			j++
		}
		if run := placed[i:j]; len(run) > 1 {
			slices.SortFunc(run, func(a, b placedPod) int {
				return cmp.Or(strings.Compare(a.pod.Namespace, b.pod.Namespace), strings.Compare(a.pod.Name, b.pod.Name),
					strings.Compare(nodes[a.node].name, nodes[b.node].name))
			})
			for k := 1; k < len(run); k++ {
				a, b := run[k-1], run[k]
				if a.pod.Namespace == b.pod.Namespace && a.pod.Name == b.pod.Name {
					key := store.PodKey(b.pod)
					dups = append(dups, found{key, fmt.Errorf("node %s: pod %s is also on node %s", nodes[b.node].name, key, nodes[a.node].name)})
				}
			}
		}
		i = j
	}
	// The hashes' seed is new at every check: the report keeps the keys' order.
	slices.SortStableFunc(dups, func(a, b found) int {
		return cmp.Or(strings.Compare(a.key.Namespace, b.key.Namespace), strings.Compare(a.key.Name, b.key.Name))
	})
	errs := make([]error, 0, len(dups))
	for _, d := range dups {
		errs = append(errs, d.err)
	}
	return errs
}

// placedPod is a pod a node holds (not a placeholder).
type placedPod struct {
	hash uint64
	pod  *corev1.Pod
	node int // its index in the check's nodes
}
