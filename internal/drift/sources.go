package drift

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// APISource lists objects from a reader, typically the manager's uncached API reader: what
// the API server holds now.
type APISource struct{ Reader client.Reader }

// Each implements Source.
func (s APISource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	list := l.List()
	if err := s.Reader.List(ctx, list); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error { return fn(o.(client.Object)) })
}

// InformerSource lists objects from the manager's informers, without copying them and
// without a call to the API server. Only kinds the cache watches have informers to list.
type InformerSource struct{ Informers cache.Informers }

// Each implements Source.
func (s InformerSource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	inf, err := s.Informers.GetInformer(ctx, l.Object)
	if err != nil {
		return err
	}
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return fmt.Errorf("informer %T does not expose its store", inf)
	}
	for _, item := range withStore.GetStore().List() {
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
