// Package nodepods watches, for a shard (a sub-cluster replica), only the pods bound to the
// shard's nodes and the unbound pods, the way kubelets do: one watch per node, field-selected
// on spec.nodeName, which the API server's watch cache serves from its spec.nodeName index
// (a 5,000-node cluster has 5,000 kubelets doing exactly that). A shard then lists, decodes
// and holds its share of the cluster's pods instead of all of them.
//
// Set is one watch per shard node (started when the node enters the shard's Node
// informer, stopped and its pods deleted when it leaves) plus one for the unbound pods
// (spec.nodeName=""), seen together as one informer with one store. Each watch is a
// client-go Reflector filling a store that hands changes out as an informer would
// (source.go): a shard runs hundreds, and an informer each cost twice the goroutines. Cache wraps the
// manager's cache so that everything that reads pods from it (the pod feed, its spec.nodeName
// index, the catch-up, the verify loop) reads the Set, and the manager's own pod informer is
// never started.
package nodepods

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unbound names the source of the pods no node holds yet.
const unbound = ""

// Set holds the pods of a shard: those bound to its nodes and the unbound ones.
type Set struct {
	client    kubernetes.Interface
	transform toolscache.TransformFunc
	log       logr.Logger
	// nodes is the shard's Node informer (label-selected): its keys are the nodes watched.
	nodes NodeInformer
	// wrap, when set, wraps each source's ListerWatcher (the manager's reconnecting one).
	wrap func(toolscache.ListerWatcher) toolscache.ListerWatcher

	mu sync.RWMutex
	// sources are the running watches by node name; unbound ("") is the unbound pods'.
	sources map[string]*source
	// index maps a pod's key to the source that holds it: lookups are O(1).
	index map[string]string
	// leftUnbound are the keys the unbound watch deleted and no node's watch holds yet:
	// a pod being bound is between two watches (see Vanished).
	leftUnbound map[string]struct{}
	// leftShard are the pods of nodes that left the shard, by key, until the feed read them
	// (see Vanished): they are out of the shard's scope, not deleted.
	leftShard map[string]*corev1.Pod
	handlers  []*registration
	ctx       context.Context
	started   atomic.Bool
	stopped   atomic.Bool
	// synced latches the first HasSynced: the sources started later (nodes joining) are not
	// part of the Set's initial list.
	synced atomic.Bool
}

// NodeInformer is what the Set reads of the shard's Node informer.
type NodeInformer interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
	HasSynced() bool
	GetStore() toolscache.Store
}

// NewSet returns a Set of the pods bound to the nodes nodes holds, each pod passed through
// transform (the manager cache's pod transform) before it is stored. wrap, when set, wraps
// each source's ListerWatcher (e.g. to wait for an unreachable API server).
func NewSet(c kubernetes.Interface, nodes NodeInformer, transform toolscache.TransformFunc,
	wrap func(toolscache.ListerWatcher) toolscache.ListerWatcher, log logr.Logger) *Set {
	return &Set{client: c, nodes: nodes, transform: transform, wrap: wrap, log: log,
		sources: map[string]*source{}, index: map[string]string{}, leftUnbound: map[string]struct{}{},
		leftShard: map[string]*corev1.Pod{}}
}

// Start starts the unbound pods' watch and follows the shard's nodes until ctx is done.
func (s *Set) Start(ctx context.Context) error {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	if _, err := s.nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				s.startSource(n.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				s.stopSource(n.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("following the shard's nodes: %w", err)
	}
	s.startSource(unbound)
	s.started.Store(true)
	<-ctx.Done()
	s.stopped.Store(true)
	return nil
}

// startSource starts the watch of a node's pods (unbound: the unbound pods').
func (s *Set) startSource(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sources[node]; ok || s.ctx == nil {
		return
	}
	selector := fields.OneTermEqualSelector("spec.nodeName", node).String()
	var lw toolscache.ListerWatcher = listThenWatch{toolscache.NewFilteredListWatchFromClient(s.client.CoreV1().RESTClient(), "pods", "",
		func(o *metav1.ListOptions) { o.FieldSelector = selector })}
	if s.wrap != nil {
		lw = s.wrap(lw)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	src := &source{name: node, cancel: cancel, done: make(chan struct{}), initial: !s.synced.Load()}
	src.store = newSourceStore(s.transform, s.forward(src))
	r := toolscache.NewReflectorWithOptions(lw, &corev1.Pod{}, src.store, toolscache.ReflectorOptions{Name: "pods of node " + node})
	s.sources[node] = src
	go func() {
		defer close(src.done)
		r.RunWithContext(ctx)
	}()
	s.log.V(1).Info("watching the pods of a node", "node", node)
}

// stopSource stops a node's watch and deletes its pods from the Set (handlers see a
// delete for each).
func (s *Set) stopSource(node string) {
	s.mu.Lock()
	src, ok := s.sources[node]
	if !ok {
		s.mu.Unlock()
		return
	}
	delete(s.sources, node)
	src.stopped.Store(true)
	src.cancel()
	var gone []any
	for _, obj := range src.store.items.List() {
		key, err := toolscache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			continue
		}
		if s.index[key] == node {
			delete(s.index, key)
			gone = append(gone, obj)
			if pod, ok := obj.(*corev1.Pod); ok {
				s.leftShard[key] = pod
			}
		}
	}
	handlers := append([]*registration(nil), s.handlers...)
	s.mu.Unlock()
	for _, obj := range gone {
		for _, h := range handlers {
			h.onDelete(obj)
		}
	}
	s.log.V(1).Info("stopped watching the pods of a node that left the shard", "node", node, "pods", len(gone))
}

// heldByNode reports whether a node's source holds the pod of key with obj's UID; s.mu is
// held.
func (s *Set) heldByNode(key string, obj any) bool {
	name, ok := s.index[key]
	if !ok || name == unbound {
		return false
	}
	src := s.sources[name]
	if src == nil {
		return false
	}
	held, exists, err := src.store.items.GetByKey(key)
	if err != nil || !exists {
		return false
	}
	a, okA := held.(*corev1.Pod)
	b, okB := obj.(*corev1.Pod)
	return okA && okB && a.UID == b.UID
}

// forward keeps the index and hands a source's events to the Set's handlers.
func (s *Set) forward(src *source) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if src.stopped.Load() {
				return
			}
			key, err := toolscache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			s.mu.Lock()
			if src.stopped.Load() {
				// Stopped meanwhile: stopSource already deleted this source's pods.
				s.mu.Unlock()
				return
			}
			if src.name == unbound && s.heldByNode(key, obj) {
				// The unbound watch relisted at a version from before the bind its node's
				// watch already reported: a bound pod never becomes unbound again, so the
				// node's source keeps the key (and handlers the newer copy).
				s.mu.Unlock()
				return
			}
			s.index[key] = src.name
			delete(s.leftUnbound, key)
			delete(s.leftShard, key)
			handlers := s.handlers
			s.mu.Unlock()
			for _, h := range handlers {
				h.onAdd(obj, isInInitialList && src.initial)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if src.stopped.Load() {
				return
			}
			s.mu.RLock()
			handlers := s.handlers
			s.mu.RUnlock()
			for _, h := range handlers {
				h.onUpdate(oldObj, newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if src.stopped.Load() {
				return
			}
			key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.index[key] == src.name {
				delete(s.index, key)
				if src.name == unbound {
					s.leftUnbound[key] = struct{}{}
				}
			}
			handlers := s.handlers
			s.mu.Unlock()
			for _, h := range handlers {
				h.onDelete(obj)
			}
		},
	}
}

// Get returns the pod the Set holds under key ("namespace/name"), the watch's own object.
func (s *Set) Get(key string) (*corev1.Pod, bool) {
	s.mu.RLock()
	name, ok := s.index[key]
	var src *source
	if ok {
		src = s.sources[name]
	}
	s.mu.RUnlock()
	if src == nil {
		return nil, false
	}
	item, exists, err := src.store.items.GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	pod, ok := item.(*corev1.Pod)
	return pod, ok
}

// OnNode returns the pods the Set holds bound to node ("" for the unbound ones).
func (s *Set) OnNode(node string) []*corev1.Pod {
	s.mu.RLock()
	defer s.mu.RUnlock()
	src := s.sources[node]
	if src == nil {
		return nil
	}
	return s.heldBy(src, nil)
}

// List returns every pod the Set holds.
func (s *Set) List() []*corev1.Pod {
	var out []*corev1.Pod
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, src := range s.sources {
		out = s.heldBy(src, out)
	}
	return out
}

// heldBy appends to out the pods of src's store that the index attributes to src: while a
// pod is bound, the unbound store and its node's may both hold it, and the index says which
// one counts. s.mu must be held.
func (s *Set) heldBy(src *source, out []*corev1.Pod) []*corev1.Pod {
	for _, item := range src.store.items.List() {
		if pod, ok := item.(*corev1.Pod); ok && s.index[pod.Namespace+"/"+pod.Name] == src.name {
			out = append(out, pod)
		}
	}
	return out
}

// Nodes returns the nodes whose pods the Set watches.
func (s *Set) Nodes() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.sources))
	for name := range s.sources {
		if name != unbound {
			out = append(out, name)
		}
	}
	return out
}

// Watches reports whether the Set watches the pods of node.
func (s *Set) Watches(node string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.sources[node]
	return ok
}

// HasSynced reports whether the Set holds the initial list of every shard node's pods and
// of the unbound pods: the Node informer synced, and every node it holds has a watch that
// stored and handed out its first list. The first time it does, the initial list is over: the pods of a node joining
// later are handed out as later adds.
func (s *Set) HasSynced() bool {
	if !s.started.Load() || !s.nodes.HasSynced() {
		return false
	}
	keys := s.nodes.GetStore().ListKeys()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if src, ok := s.sources[unbound]; !ok || !src.synced() {
		return false
	}
	for _, k := range keys {
		src, ok := s.sources[k]
		if !ok || !src.synced() {
			return false
		}
	}
	s.synced.Store(true)
	return true
}

// Vanished decides what a key the Set no longer holds means. A pod being bound leaves the
// unbound watch (a delete) before its node's watch reports it (an add); in between, the
// pod must not be taken as deleted. When the key's last source was the unbound watch,
// one live GET through api decides: bound to a shard node, retry is true (its node's watch
// will report it); bound elsewhere, the pod is returned (out of the shard's scope); not
// found, it is gone. A pod of a node that left the shard is returned as last seen (out of
// scope: it was not deleted, and must not be taken for a deletion that keeps its place).
// A key the Set holds again (the caller's lookup raced its add) is retried. Any other key
// is gone.
func (s *Set) Vanished(ctx context.Context, api client.Reader, key types.NamespacedName) (pod *corev1.Pod, retry bool, err error) {
	k := key.Namespace + "/" + key.Name
	s.mu.Lock()
	_, held := s.index[k]
	_, between := s.leftUnbound[k]
	left, outOfShard := s.leftShard[k]
	if outOfShard && !held {
		delete(s.leftShard, k)
	}
	s.mu.Unlock()
	switch {
	case held:
		return nil, true, nil
	case outOfShard:
		return left, false, nil
	case !between:
		return nil, false, nil
	}
	live := &corev1.Pod{}
	if err := api.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			s.settle(k)
			return nil, false, nil
		}
		return nil, false, err
	}
	if live.Spec.NodeName == "" || s.Watches(live.Spec.NodeName) {
		// Still unbound (the unbound watch lags) or bound here: the watches will report it.
		return nil, true, nil
	}
	s.settle(k)
	return live, false, nil
}

// settle forgets that a key left the unbound watch.
func (s *Set) settle(key string) {
	s.mu.Lock()
	delete(s.leftUnbound, key)
	s.mu.Unlock()
}

// listThenWatch is a node's ListerWatcher, which tells its reflector to list then watch
// rather than stream the list (client-go's WatchListClient): a streamed list is a
// consistent read, each one waiting until the API server's watch cache is as fresh as etcd,
// and a shard opens one per node at once. At 1,000 nodes / 30,000 pods, 4 shards of 250
// nodes took 5.3-7.3 s to fill streaming (2.2-3.0x the whole-cluster replica) and 1.4-1.8 s
// listing from the watch cache (make bench-e2e SIZE=medium, -shards 4).
type listThenWatch struct{ *toolscache.ListWatch }

// IsWatchListSemanticsUnSupported implements client-go's watchlist marker.
func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }
