package drift

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// compareKindOnExpiry is compareKind, listing the kind again once from its start when the
// API server answers a page 410 Gone (its continue token expired: etcd compacted the
// revision the listing reads at, which a long listing on a busy cluster can outlast).
// What the first listing gathered is dropped; a second expiry is an error.
func compareKindOnExpiry(ctx context.Context, c Cache, src Source, keep KeepFunc, listings []Listing, kind stores.Kind) ([]Difference, error) {
	diffs, err := compareKind(ctx, c, src, keep, listings, kind)
	if !expired(err) {
		return diffs, err
	}
	diffs, err = compareKind(ctx, c, src, keep, listings, kind)
	if expired(err) {
		return nil, fmt.Errorf("the API server's listing of %s expired twice (410 Gone: the revision it read at was compacted before its last page); "+
			"retry the comparison, when the API server is less busy: %w", kind, err)
	}
	return diffs, err
}

// expired reports whether err is the API server's 410 Gone of a listing (reason Expired, or
// Gone from a server that gives no reason).
func expired(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}
