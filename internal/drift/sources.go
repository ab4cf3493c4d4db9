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
// the API server holds now. It lists in pages of PageSize (default 500), so that comparing a
// cluster of 150,000 pods never holds more than a page of copies at once.
type APISource struct {
	Reader   client.Reader
	PageSize int64
}

// Each implements Source.
func (s APISource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	limit := s.PageSize
	if limit <= 0 {
		limit = 500
	}
	next := ""
	for {
		list := l.List()
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
