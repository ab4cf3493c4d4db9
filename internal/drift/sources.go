package drift

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// APISource lists objects from a reader, typically the manager's uncached API reader: what
// the API server holds now. It lists in pages of PageSize (default 2,000), so that comparing a
// cluster of 150,000 pods never holds more than a page of copies at once.
type APISource struct {
	Reader   client.Reader
	PageSize int64
	// MetadataScheme, when set, lists only the objects' metadata (PartialObjectMetadata,
	// each listing's type found in this scheme): the comparison reads keys and resource
	// versions only, and the API server then encodes and the operator decodes a fraction of
	// each object. Leave it nil when a KeepFunc reads more than the metadata.
	MetadataScheme *runtime.Scheme
}

// defaultPageSize is how many objects a page of APISource holds: 2,000 pods' metadata is a
// few megabytes, and 150,000 pods take 75 requests instead of the 300 pages of 500 took.
const defaultPageSize = 2000

// Each implements Source.
func (s APISource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	limit := s.PageSize
	if limit <= 0 {
		limit = defaultPageSize
	}
	newList := l.List
	if s.MetadataScheme != nil {
		if gvk, err := apiutil.GVKForObject(l.Object, s.MetadataScheme); err == nil {
			newList = func() client.ObjectList {
				list := &metav1.PartialObjectMetadataList{}
				list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				return list
			}
		}
	}
	next := ""
	for {
		list := newList()
		if err := s.Reader.List(ctx, list, client.Limit(limit), client.Continue(next)); err != nil {
			return err
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error { return fn(o.(client.Object)) }); err != nil {
			return err
		}
		if next = list.GetContinue(); next == "" {
			return nil
		}
	}
}

// Get implements Source.
func (s APISource) Get(ctx context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	return getFrom(ctx, s.Reader, l, key)
}

// InformerSource lists objects from the manager's informers, without copying them and
// without a call to the API server. Only kinds the cache watches have informers to list.
type InformerSource struct{ Informers cache.Informers }

// Each implements Source.
func (s InformerSource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	store, err := s.store(ctx, l)
	if err != nil {
		return err
	}
	for _, item := range store.List() {
		obj, ok := item.(client.Object)
		if !ok {
			return fmt.Errorf("informer of %T holds a %T", l.Object, item)
		}
		if err := fn(obj); err != nil {
			return err
		}
	}
	return nil
}

// held implements heldSource: the objects of the informer's store.
func (s InformerSource) held(ctx context.Context, l Listing) ([]any, error) {
	store, err := s.store(ctx, l)
	if err != nil {
		return nil, err
	}
	return store.List(), nil
}

// Get implements Source, from the informer's store (no copy, no call to the API server).
func (s InformerSource) Get(ctx context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	store, err := s.store(ctx, l)
	if err != nil {
		return nil, false, err
	}
	storeKey := key.Name
	if key.Namespace != "" {
		storeKey = key.Namespace + "/" + key.Name
	}
	item, found, err := store.GetByKey(storeKey)
	if err != nil || !found {
		return nil, false, err
	}
	obj, ok := item.(client.Object)
	if !ok {
		return nil, false, fmt.Errorf("informer of %T holds a %T", l.Object, item)
	}
	return obj, true, nil
}

// store is the store of the listing's informer.
func (s InformerSource) store(ctx context.Context, l Listing) (toolscache.Store, error) {
	inf, err := s.Informers.GetInformer(ctx, l.Object)
	if err != nil {
		return nil, err
	}
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("informer %T does not expose its store", inf)
	}
	return withStore.GetStore(), nil
}

// NodePods is API with the pods listed node by node (field selector spec.nodeName, which the
// API server answers from its spec.nodeName index): a shard compares its nodes' pods without
// listing the whole cluster's. Unbound pods are not listed (no shard keeps them).
type NodePods struct {
	API APISource
	// Nodes are the shard's nodes.
	Nodes func() []string
}

// Each implements Source.
func (s NodePods) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	if l.Kind != stores.KindPod {
		return s.API.Each(ctx, l, fn)
	}
	limit := s.API.PageSize
	if limit <= 0 {
		limit = defaultPageSize
	}
	for _, node := range s.Nodes() {
		next := ""
		for {
			list := l.List()
			if err := s.API.Reader.List(ctx, list, client.MatchingFields{"spec.nodeName": node}, client.Limit(limit), client.Continue(next)); err != nil {
				return fmt.Errorf("listing the pods of node %s: %w", node, err)
			}
			if err := meta.EachListItem(list, func(o runtime.Object) error { return fn(o.(client.Object)) }); err != nil {
				return err
			}
			if next = list.GetContinue(); next == "" {
				break
			}
		}
	}
	return nil
}

// Get implements Source.
func (s NodePods) Get(ctx context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	return s.API.Get(ctx, l, key)
}
