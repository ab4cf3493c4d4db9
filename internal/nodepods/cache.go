package nodepods

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cache is the manager's cache with its pods read from a Set: GetInformer, Get and List of
// pods never start the cache's own (whole-cluster) pod informer.
type Cache struct {
	cache.Cache
	Set *Set
}

// NewCacheFunc returns the manager's NewCache of a shard: the default cache (with opts:
// the Node informer label-selected to the shard) whose pods come from a Set of the shard's
// nodes, transformed like the cache's other objects (opts.DefaultTransform), each node's
// ListerWatcher wrapped by wrap when set.
func NewCacheFunc(log logr.Logger, wrap func(toolscache.ListerWatcher) toolscache.ListerWatcher) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		inner, err := cache.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		// Protobuf like the manager's own clients of built-in types (a pod decodes several
		// times faster than from JSON).
		pcfg := rest.CopyConfig(cfg)
		pcfg.ContentType = runtime.ContentTypeProtobuf
		pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		var cs kubernetes.Interface
		if opts.HTTPClient != nil {
			cs, err = kubernetes.NewForConfigAndClient(pcfg, opts.HTTPClient)
		} else {
			cs, err = kubernetes.NewForConfig(pcfg)
		}
		if err != nil {
			return nil, fmt.Errorf("creating the client of the shard's pod watches: %w", err)
		}
		// Registered now, started with the cache.
		nodes, err := inner.GetInformer(context.Background(), &corev1.Node{}, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("getting the shard's Node informer: %w", err)
		}
		ni, ok := nodes.(NodeInformer)
		if !ok {
			return nil, fmt.Errorf("the Node informer (%T) does not expose its store", nodes)
		}
		transform := opts.DefaultTransform
		for obj, bo := range opts.ByObject {
			if _, ok := obj.(*corev1.Pod); ok && bo.Transform != nil {
				transform = bo.Transform
			}
		}
		return &Cache{Cache: inner, Set: NewSet(cs, ni, transform, wrap, log)}, nil
	}
}

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// Start implements cache.Cache: the Set follows the cache's Node informer.
func (c *Cache) Start(ctx context.Context) error {
	errs := make(chan error, 1)
	go func() { errs <- c.Set.Start(ctx) }()
	if err := c.Cache.Start(ctx); err != nil {
		return err
	}
	return <-errs
}

// WaitForCacheSync implements cache.Cache.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return c.Cache.WaitForCacheSync(ctx) && toolscache.WaitForCacheSync(ctx.Done(), c.Set.HasSynced)
}

// GetInformer implements cache.Informers: pods are the Set's.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if _, ok := obj.(*corev1.Pod); ok {
		return c.Set, nil
	}
	return c.Cache.GetInformer(ctx, obj, opts...)
}

// GetInformerForKind implements cache.Informers.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if gvk == podGVK {
		return c.Set, nil
	}
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

// RemoveInformer implements cache.Informers: the Set lives as long as the cache.
func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	if _, ok := obj.(*corev1.Pod); ok {
		return nil
	}
	return c.Cache.RemoveInformer(ctx, obj)
}

// IndexField implements client.FieldIndexer: the Set answers spec.nodeName itself, and
// takes no other index of pods.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if _, ok := obj.(*corev1.Pod); ok {
		if field == nodeNameField {
			return nil
		}
		return fmt.Errorf("a shard indexes pods by %s only, not %s", nodeNameField, field)
	}
	return c.Cache.IndexField(ctx, obj, field, extract)
}

const nodeNameField = "spec.nodeName"

// Get implements client.Reader; a pod is the Set's (a shallow copy, as the manager's cache
// with deep copies disabled hands out).
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	out, ok := obj.(*corev1.Pod)
	if !ok {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	p, found := c.Set.Get(key.Namespace + "/" + key.Name)
	if !found {
		return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
	}
	*out = *p
	return nil
}

// List implements client.Reader; pods are the Set's, of one node when the field selector
// names spec.nodeName (the only field a shard selects pods by).
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	out, ok := list.(*corev1.PodList)
	if !ok {
		return c.Cache.List(ctx, list, opts...)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	var pods []*corev1.Pod
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		node, ok := lo.FieldSelector.RequiresExactMatch(nodeNameField)
		if !ok || len(lo.FieldSelector.Requirements()) != 1 {
			return fmt.Errorf("a shard lists pods by %s only, not %q", nodeNameField, lo.FieldSelector)
		}
		pods = c.Set.OnNode(node)
	} else {
		pods = c.Set.List()
	}
	out.Items = make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if lo.Namespace != "" && p.Namespace != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(p.Labels)) {
			continue
		}
		out.Items = append(out.Items, *p)
	}
	return nil
}
