package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// ListFloor is how long a bare client in the harness takes to list what
// /debug/cache/compare lists: every kind of drift.Listings, metadata only, in the
// comparison's pages, through the operator's own listing code and nothing else (no cache to
// compare with), as many kinds at once as the comparison lists (drift.CompareConcurrency),
// each kind's listings one after another.
// It is the floor under the comparison: what the API server takes to serve those lists,
// and the client to read them.
func ListFloor(ctx context.Context, cfg *rest.Config) (time.Duration, int, error) {
	s := scheme.New()
	c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: s})
	if err != nil {
		return 0, 0, err
	}
	// The first request of each kind finds its mapping (discovery): a warm-up lists one
	// object of each, as a running operator's reader has long done.
	warm := drift.APISource{Reader: c, MetadataScheme: s, PageSize: 1}
	for _, l := range drift.Listings {
		if err := warm.Each(ctx, l, func(client.Object) error { return errWarm }); err != nil && !errors.Is(err, errWarm) {
			return 0, 0, fmt.Errorf("listing %s: %w", l.Kind, err)
		}
	}
	src := drift.APISource{Reader: c, MetadataScheme: s}
	var objects atomic.Int64
	start := time.Now()
	// One goroutine per kind, its listings one after another (the owners' five kinds are one
	// kind of the cache's), as drift.Compare lists them.
	var kinds []stores.Kind
	byKind := map[stores.Kind][]drift.Listing{}
	for _, l := range drift.Listings {
		if byKind[l.Kind] == nil {
			kinds = append(kinds, l.Kind)
		}
		byKind[l.Kind] = append(byKind[l.Kind], l)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(drift.CompareConcurrency)
	for _, kind := range kinds {
		g.Go(func() error {
			for _, l := range byKind[kind] {
				if err := src.Each(gctx, l, func(client.Object) error { objects.Add(1); return nil }); err != nil {
					return fmt.Errorf("listing %s: %w", l.Kind, err)
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return time.Since(start), int(objects.Load()), err
}

// errWarm stops a warm-up listing at its first object.
var errWarm = errors.New("warm")
