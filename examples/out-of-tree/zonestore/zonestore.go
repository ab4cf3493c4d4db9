// Package zonestore is a custom multicache store, registered out of tree: the pods of every
// topology zone (the topology.kubernetes.io/zone label of the pod's node), and per zone how
// many pods each workload runs there. A sibling reads it to find the workloads that a zone
// outage would take down whole.
//
// It handles three kinds (pods, nodes, workload owners) by implementing their event
// interfaces; the handler subscribes it to exactly those. Owners are watched only because
// an enabled store handles them: with --stores=nodes,pods (neither this store nor the PDB
// store) no owner informer is opened.
package zonestore

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Name is the store's name: its --stores value, metric label and dump key.
const Name = "zones"

// NoZone is the zone of pods whose node is unknown or has no zone label.
const NoZone = ""

// Store keeps the pods per zone. All methods run under the handler's lock.
type Store struct {
	// nodeZone is the zone of every node seen.
	nodeZone map[string]string
	// podNode is the node of every pod counted (bound, not finished, not a placeholder).
	podNode map[types.NamespacedName]string
	// nodePods indexes podNode by node, so a node changing zone moves its pods.
	nodePods map[string]map[types.NamespacedName]bool
	// zones are the counted pods of each zone, with their owner (zero when none).
	zones *store.Versioned[string, *zone]
	// owners are the workloads seen: a spread is reported only for them.
	owners *store.Versioned[store.OwnerKey, *store.Owner]
}

type zone struct {
	pods map[types.NamespacedName]store.OwnerKey
}

// New is the store's factory (multicache.WithStore(zonestore.Name, zonestore.New)).
func New(h store.Handle) (store.Store, error) {
	return &Store{
		nodeZone: map[string]string{},
		podNode:  map[types.NamespacedName]string{},
		nodePods: map[string]map[types.NamespacedName]bool{},
		zones:    store.NewVersioned[string, *zone](h.Generations()),
		owners:   store.NewVersioned[store.OwnerKey, *store.Owner](h.Generations()),
	}, nil
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.PodHandler   = (*Store)(nil)
	_ store.NodeHandler  = (*Store)(nil)
	_ store.OwnerHandler = (*Store)(nil)
)

// Name implements store.Store.
func (s *Store) Name() store.Name { return Name }

// Len implements store.Store: the pods counted.
func (s *Store) Len() int { return len(s.podNode) }

// AddPod implements store.PodHandler.
func (s *Store) AddPod(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" || store.IsTerminal(pod) || store.IsPlaceholder(pod) {
		return
	}
	key := store.PodKey(pod)
	owner, _, _ := store.ControllerOwner(pod)
	s.podNode[key] = pod.Spec.NodeName
	if s.nodePods[pod.Spec.NodeName] == nil {
		s.nodePods[pod.Spec.NodeName] = map[types.NamespacedName]bool{}
	}
	s.nodePods[pod.Spec.NodeName][key] = true
	s.addToZone(s.nodeZone[pod.Spec.NodeName], key, owner)
}

// UpdatePod implements store.PodHandler.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	s.DeletePod(oldPod)
	s.AddPod(newPod)
}

// DeletePod implements store.PodHandler.
func (s *Store) DeletePod(pod *corev1.Pod) {
	key := store.PodKey(pod)
	node, ok := s.podNode[key]
	if !ok {
		return
	}
	delete(s.podNode, key)
	delete(s.nodePods[node], key)
	if len(s.nodePods[node]) == 0 {
		delete(s.nodePods, node)
	}
	s.removeFromZone(s.nodeZone[node], key)
}

// AddNode implements store.NodeHandler.
func (s *Store) AddNode(node *corev1.Node) {
	s.setZone(node.Name, node.Labels[corev1.LabelTopologyZone])
}

// UpdateNode implements store.NodeHandler.
func (s *Store) UpdateNode(_, node *corev1.Node) {
	s.setZone(node.Name, node.Labels[corev1.LabelTopologyZone])
}

// DeleteNode implements store.NodeHandler: its pods, still there until they are
// deleted, have no zone any more.
func (s *Store) DeleteNode(node *corev1.Node) {
	s.setZone(node.Name, NoZone)
	delete(s.nodeZone, node.Name)
}

// AddOwner implements store.OwnerHandler.
func (s *Store) AddOwner(owner *store.Owner) { s.owners.Set(owner.Key(), owner) }

// UpdateOwner implements store.OwnerHandler.
func (s *Store) UpdateOwner(_, owner *store.Owner) { s.owners.Set(owner.Key(), owner) }

// DeleteOwner implements store.OwnerHandler.
func (s *Store) DeleteOwner(owner *store.Owner) { s.owners.Delete(owner.Key()) }

// setZone records a node's zone and moves its pods when it changed.
func (s *Store) setZone(node, z string) {
	old, seen := s.nodeZone[node]
	s.nodeZone[node] = z
	if seen && old == z || !seen && z == NoZone {
		return
	}
	for key := range s.nodePods[node] {
		owner := s.removeFromZone(old, key)
		s.addToZone(z, key, owner)
	}
}

func (s *Store) addToZone(name string, key types.NamespacedName, owner store.OwnerKey) {
	z, ok := s.zones.Get(name)
	if !ok {
		z = &zone{pods: map[types.NamespacedName]store.OwnerKey{}}
		s.zones.Set(name, z)
	}
	z.pods[key] = owner
	s.zones.Touch(name)
}

func (s *Store) removeFromZone(name string, key types.NamespacedName) store.OwnerKey {
	z, ok := s.zones.Get(name)
	if !ok {
		return store.OwnerKey{}
	}
	owner := z.pods[key]
	delete(z.pods, key)
	if len(z.pods) == 0 {
		s.zones.Delete(name)
	} else {
		s.zones.Touch(name)
	}
	return owner
}

// CheckInvariants implements store.Store: every counted pod is in exactly one zone,
// its node's.
func (s *Store) CheckInvariants() []error {
	var errs []error
	total := 0
	s.zones.Range(func(name string, z *zone) bool {
		total += len(z.pods)
		for key := range z.pods {
			node, ok := s.podNode[key]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("pod %s is in zone %q but not counted", key, name))
			case s.nodeZone[node] != name:
				errs = append(errs, fmt.Errorf("pod %s is in zone %q, its node %s in %q", key, name, node, s.nodeZone[node]))
			}
		}
		return true
	})
	if total != len(s.podNode) {
		errs = append(errs, fmt.Errorf("%d pods in zones, %d counted", total, len(s.podNode)))
	}
	return errs
}

// Dump implements store.Store: per zone, its pods and how many each workload has.
func (s *Store) Dump() any {
	type zoneDump struct {
		Pods      int            `json:"pods"`
		Workloads map[string]int `json:"workloads,omitempty"`
	}
	out := map[string]zoneDump{}
	s.zones.Range(func(name string, z *zone) bool {
		d := zoneDump{Pods: len(z.pods), Workloads: map[string]int{}}
		for _, owner := range z.pods {
			if _, known := s.owners.Get(owner); known {
				d.Workloads[fmt.Sprintf("%s/%s/%s", owner.Type, owner.Namespace, owner.Name)]++
			}
		}
		out[name] = d
		return true
	})
	return out
}
